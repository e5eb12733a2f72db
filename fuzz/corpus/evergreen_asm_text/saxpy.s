; y[gid] = a * x[gid] + y[gid] (f32)
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2
    { add_int r3.x, r2.y, cb0[2].z      ; &x[gid]
      add_int r3.y, r2.y, cb0[2].w }    ; &y[gid]
    lshr_int r6.x, r3.y, 2              ; RAT index of y[gid]
fetch
    vfetch r4.x___, r3.x, vb1           ; x[gid]
    vfetch r5.x___, r3.y, vb1           ; y[gid]
alu
    mul_ieee r4.x, cb0[2].y, r4.x       ; a * x[gid]
    add r4.x, r4.x, r5.x                ; + y[gid]
mem_rat_cacheless store rat0[r6.x], r4.x
end
