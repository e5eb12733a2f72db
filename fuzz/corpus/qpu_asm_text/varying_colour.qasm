    fmul r0, vary, ra15          # red: Vp * W, C to r5
    fadd r0, r0, r5
    fmul r1, vary, ra15          # green
    fadd r1, r1, r5
    fmul r2, vary, ra15          # blue
    fadd r2, r2, r5
    nop ; fmul r3.c8a, r0, 1.0   # float to 8-bit colour, byte a
    nop ; fmul r3.c8b, r1, 1.0
    nop ; fmul r3.c8c, r2, 1.0
    nop ; fmul r3.c8d, 1.0, 1.0  # alpha 1.0
    mov tlb_color_all, r3        # waits for the scoreboard
    thrend
    nop
    sbdone
