; *sum += a[gid] (u32, atomic)
alu
    muladd_uint24 r2.x, r1.x, cb0[1].z, r0.x   ; gid (24-bit multiply-add)
    lshl_int r2.y, r2.x, 2
    add_int r3.x, r2.y, cb0[2].y        ; &a[gid]
    lshr_int r6.x, cb0[2].z, 2          ; RAT index of *sum
fetch
    vfetch r4.x___, r3.x, vb1           ; a[gid]
mem_rat add rat0[r6.x], r4.x
end
