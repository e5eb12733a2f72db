    ldi vw_setup, 0x1a00          # vpm::write_rows(0)
    shl r0, elem_num, 2           # byte offset of each element
    add tmu0_s, unif, r0          # uniform 0: a
    add tmu0_s, unif, r0          # uniform 1: b
    mov ra1, unif                 # uniform 2: c
    ldtmu0
    mov r1, r4                    # a[i]
    ldtmu0
    add vpm, r1, r4               # a[i] + b[i]
    ldi vw_setup, 0x80904000      # vpm::store_rows(1, 16, 0)
    mov vw_addr, ra1
    mov r0, vw_wait
    thrend
    nop
    nop
