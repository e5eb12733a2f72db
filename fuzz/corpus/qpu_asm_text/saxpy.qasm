    shl rb8, elem_num, 2          # byte offset of each element
    mov ra0, unif                 # a
    mov ra1, unif                 # x row address
    mov ra2, unif                 # y row address
    mov ra3, unif                 # out row address
    mov ra4, unif                 # rows left
    mov rb5, unif                 # row stride in bytes
    mov rb6, unif                 # VPM write setup for this QPU's VPM row
    mov rb7, unif                 # VDW setup for this QPU's VPM row
row:
    add tmu0_s, ra1, rb8          # x[i]
    add tmu0_s, ra2, rb8          # y[i]
    mov r0, mutex_acq
    mov vw_setup, rb6
    ldtmu0
    fmul r1, r4, ra0              # a * x[i]
    ldtmu0
    fadd vpm, r1, r4              # + y[i]
    mov vw_setup, rb7
    mov vw_addr, ra3
    mov r0, vw_wait
    mov mutex_release, r0
    add ra1, ra1, rb5
    add ra2, ra2, rb5
    add ra3, ra3, rb5
    sub.setf ra4, ra4, 1
    bra.anynz -> row
    nop
    nop
    nop
    thrend
    nop
    nop
