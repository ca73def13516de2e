"""Draw a ``--timeline`` JSON file (Chrome trace-event format, as ``isasim run ... --timeline FILE`` writes it) as
an SVG picture: a row per track (pipe), a box per instruction at its step, an arrow per flow (SetFlag -> WaitFlag).

    isasim run examples/ascend_cube/int8_gemm.trace.json --timeline /tmp/gemm.json
    python tools/timeline_svg.py /tmp/gemm.json -o docs/ascend_cube/guide/int8_gemm-timeline.svg \
        --title "examples/ascend_cube/int8_gemm.s, schedule inorder"

The x axis is the document's ``ts``: for isasim the step in the run's order, not a time.  The drawing uses nothing
but the JSON, so it draws any file of "X" boxes, "M" thread_name tracks and "s"/"f" flows.
"""

from __future__ import annotations

import argparse
import json
from html import escape
from pathlib import Path

LABEL_W = 96  # the track names' column
STEP_W = 76  # one ts unit
BOX_H = 40
ROW_H = 62
TOP = 54
PAD = 14
COLOURS = {"set": ("#fde2c4", "#c0701a"), "wait": ("#fde2c4", "#c0701a"), "barrier": ("#e6dcf5", "#6b4ea0")}
PLAIN = ("#dbe8f6", "#3a6ea5")


def _label(name: str) -> list[str]:
    """A box's label in at most two lines: the form, then the flag or barrier it names."""
    form, _, rest = name.partition(" ")
    return [form, rest] if rest else [form]


def draw(document: dict, title: str) -> str:
    events = document["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    order = {e["tid"]: e["args"]["sort_index"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_sort_index"}
    rows = {tid: n for n, tid in enumerate(sorted(tracks, key=lambda t: (order.get(t, t), t)))}
    boxes = [e for e in events if e.get("ph") == "X"]
    last = max((b["ts"] + b["dur"] for b in boxes), default=1)
    width = LABEL_W + int(last * STEP_W) + 2 * PAD
    height = TOP + len(rows) * ROW_H + 46

    def x(ts: float) -> float:
        return LABEL_W + PAD + ts * STEP_W

    def y(tid: int) -> float:
        return TOP + rows[tid] * ROW_H

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="11">',
           '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#b3261e"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{PAD}" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
           f'<text x="{PAD}" y="40" fill="#555">a row per pipe, a box per instruction, an arrow from each SetFlag '
           f'to the WaitFlag it satisfied; x is the step in the run\'s order, not time</text>']
    for tid, row in rows.items():
        top = y(tid)
        if row % 2:
            out.append(f'<rect x="0" y="{top}" width="{width}" height="{ROW_H}" fill="#f6f6f6"/>')
        out.append(f'<text x="{PAD}" y="{top + ROW_H / 2 + 4}" font-weight="bold">{escape(tracks[tid])}</text>')
    for box in boxes:
        fill, stroke = COLOURS.get(box.get("cat"), PLAIN)
        left, top = x(box["ts"]) + 3, y(box["tid"]) + (ROW_H - BOX_H) / 2
        w = box["dur"] * STEP_W - 6
        tip = escape(f'#{box["args"]["index"]} {box["args"]["text"]}')
        out.append(f'<g><title>{tip}</title><rect x="{left}" y="{top}" width="{w}" height="{BOX_H}" rx="4" '
                   f'fill="{fill}" stroke="{stroke}"/>')
        lines = _label(box["name"])
        for n, line in enumerate(lines):
            size = 10 if len(line) > 10 else 11
            baseline = top + BOX_H / 2 + 4 + (n - (len(lines) - 1) / 2) * 13
            out.append(f'<text x="{left + w / 2}" y="{baseline}" text-anchor="middle" font-size="{size}">'
                       f'{escape(line)}</text>')
        out.append("</g>")
    flows: dict = {}
    for event in events:
        if event.get("ph") in ("s", "f"):
            flows.setdefault(event["id"], {})[event["ph"]] = event
    for flow in flows.values():
        if "s" not in flow or "f" not in flow:
            continue
        start, end = flow["s"], flow["f"]
        x0, y0 = x(start["ts"]), y(start["tid"]) + (ROW_H + BOX_H) / 2  # under the SetFlag's box
        x1, y1 = x(end["ts"]), y(end["tid"]) + (ROW_H - BOX_H) / 2  # onto the top of the WaitFlag's box
        if end["tid"] == start["tid"] or y1 < y0:
            y0 = y(start["tid"]) + (ROW_H - BOX_H) / 2
            y1 = y(end["tid"]) + (ROW_H + BOX_H) / 2 if y1 < y0 else y1
        bend = (y0 + y1) / 2
        out.append(f'<path d="M{x0},{y0} C{x0},{bend} {x1},{bend} {x1},{y1}" fill="none" stroke="#b3261e" '
                   f'stroke-width="1.6" marker-end="url(#head)"/>')
    axis = TOP + len(rows) * ROW_H + 8
    out.append(f'<line x1="{x(0)}" y1="{axis}" x2="{x(last)}" y2="{axis}" stroke="#888"/>')
    for step in range(int(last) + 1):
        out.append(f'<line x1="{x(step)}" y1="{axis}" x2="{x(step)}" y2="{axis + 4}" stroke="#888"/>')
        if step < last:
            out.append(f'<text x="{x(step + 0.5)}" y="{axis + 15}" text-anchor="middle" fill="#555">{step}</text>')
    out.append(f'<text x="{x(0)}" y="{axis + 32}" fill="#555">step (the order the run took; '
               f'no cycle counts)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timeline", help="the --timeline JSON file")
    parser.add_argument("-o", "--output", required=True, help="the SVG file to write")
    parser.add_argument("--title", default=None, help="the picture's title (default: the JSON file's name)")
    args = parser.parse_args()
    document = json.loads(Path(args.timeline).read_text(encoding="utf-8"))
    Path(args.output).write_text(draw(document, args.title or Path(args.timeline).name), encoding="utf-8")


if __name__ == "__main__":
    main()
