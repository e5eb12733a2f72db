; c[gid] = a[gid] + b[gid] (f32)
alu
    mullo_uint r2.x, r1.x, cb0[1].z     ; group id * local size x
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2              ; byte offset of element gid
    { add_int r3.x, r2.y, cb0[2].y      ; &a[gid]
      add_int r3.y, r2.y, cb0[2].z      ; &b[gid]
      add_int r3.z, r2.y, cb0[2].w }    ; &c[gid]
    lshr_int r6.x, r3.z, 2              ; RAT index: dword address of c[gid]
fetch
    vfetch r4.x___, r3.x, vb1           ; a[gid]
    vfetch r5.x___, r3.y, vb1           ; b[gid]
alu
    add r4.x, r4.x, r5.x
mem_rat_cacheless store rat0[r6.x], r4.x
end
