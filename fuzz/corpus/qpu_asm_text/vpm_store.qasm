    ldi vw_setup, 0x1a00          # vpm::write_rows(0)
    mov vpm, elem_num
    ldi vw_setup, 0x80904000      # vpm::store_rows(1, 16, 0)
    mov vw_addr, unif             # uniform 0: destination address
    mov r0, vw_wait
    thrend
    nop
    nop
