// SME2 UDOT (multiple and single vector), VGx4: each 32-bit element of four ZA rows gains the 2-way dot
// product of a 16-bit pair of {z0-z3} with the pair of z4 at the same position.  Which four rows: the
// vector group w8 + 0 names, with vstride = (SVL/8) / 4 rows between them (see `isasim explain`).
// Streaming mode and ZA are on from the init file (svcr = 3), so the Z registers keep their values;
// SMSTART here would zero them.
        ldr x8, [x0]                                // the vector-group index, from memory
        udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h
        ret
