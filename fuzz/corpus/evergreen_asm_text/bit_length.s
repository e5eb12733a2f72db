; out[gid] = bit length of in[gid] (u32), by a loop
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2
    { add_int r3.x, r2.y, cb0[2].y      ; &in[gid]
      add_int r3.y, r2.y, cb0[2].z }    ; &out[gid]
    lshr_int r6.x, r3.y, 2
fetch
    vfetch r4._x__, r3.x, vb1           ; r4.y = v (destination select: y <- element x)
alu
    mov r7.x, 0                         ; count
loop_start_dx10
alu_push_before
    pred_sete_int.exec.pred _.y, r4.y, 0    ; active: finished threads (v == 0)
jump body, pop=1                        ; none finished: skip the break
loop_break pop=1
pop 1
body:
alu
    { lshr_int r4.y, r4.y, 1            ; v >>= 1
      add_int r7.x, r7.x, 1 }           ; count++ (same group: reads the old values)
loop_end
mem_rat_cacheless store rat0[r6.x], r7.x
end
