; out[gid] = in[gid] odd ? 3 * in[gid] + 1 : in[gid] >> 1 (u32)
alu
    mullo_uint r2.x, r1.x, cb0[1].z
    add_int r2.x, r2.x, r0.x            ; gid
    lshl_int r2.y, r2.x, 2
    { add_int r3.x, r2.y, cb0[2].y      ; &in[gid]
      add_int r3.y, r2.y, cb0[2].z }    ; &out[gid]
    lshr_int r6.x, r3.y, 2              ; RAT index of out[gid]
fetch
    vfetch r4.x___, r3.x, vb1           ; v
alu_push_before
    and_int r5.x, r4.x, 1
    pred_setne_int.exec.pred _.x, r5.x, 0   ; active: odd v
jump even
alu
    mullo_uint r7.x, r4.x, 3
    add_int r7.x, r7.x, 1               ; 3v + 1
even:
else done, pop=1                        ; active: even v
alu
    lshr_int r7.x, r4.x, 1              ; v / 2
pop 1
done:
mem_rat_cacheless store rat0[r6.x], r7.x
end
