/* the trace viewer (written in the next commit) */
