;; The first, coarse pass where the engine has relaxed SIMD (Node 22 and later): one instruction per 16 bytes of a row,
;; i32x4.relaxed_dot_i8x16_i7x16_add_s (VPDPBUSD on x86 with VNNI), against about seven in kernel.wat's "dots".
;;
;; It works on kernel.wat's memory and row layout (imported), with the query as 16 bytes a block instead of 32:
;;   $query  the query as u8 values 64 + q, q in [-63, 63] (so every byte is in [1, 127]: the "i7" operand, whose
;;           product with a signed byte is the same whether an engine reads it signed or unsigned)
;;   $out    per row Σ row[i] · (64 + q[i]) = row·q + 64·Σ row[i]; the caller takes 64 times the row's sum away
;; Exactness: |products| ≤ 127·127, four per lane per block, stride/16 blocks: far below 2^31 at any dimension the
;; index takes, so the result is the exact integer (the pair sums of the x86 form stay below 2^15 as well).
(module
  (import "kernel" "memory" (memory 1))

  (func (export "dots7") (param $query i32) (param $rows i32) (param $groups i32) (param $stride i32) (param $out i32)
    (local $g i32) (local $p i32) (local $end i32) (local $qp i32)
    (local $end2 i32)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128) (local $q v128)
    (local $acc4 v128) (local $acc5 v128) (local $acc6 v128) (local $acc7 v128) (local $q2 v128)
    (local.set $p (local.get $rows))
    (block $done
      (loop $each_group
        (br_if $done (i32.ge_u (local.get $g) (local.get $groups)))
        (local.set $end (i32.add (local.get $p) (i32.shl (local.get $stride) (i32.const 2))))
        (local.set $qp (local.get $query))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (local.set $acc2 (v128.const i32x4 0 0 0 0))
        (local.set $acc3 (v128.const i32x4 0 0 0 0))
        ;; two blocks a step while two are left (a second set of accumulators, so that no sum waits on the one before)
        (local.set $acc4 (v128.const i32x4 0 0 0 0))
        (local.set $acc5 (v128.const i32x4 0 0 0 0))
        (local.set $acc6 (v128.const i32x4 0 0 0 0))
        (local.set $acc7 (v128.const i32x4 0 0 0 0))
        (local.set $end2 (i32.sub (local.get $end) (i32.const 64)))
        (block $pairs_done
          (loop $each_pair
            (br_if $pairs_done (i32.ge_u (local.get $p) (local.get $end2)))
            (local.set $q (v128.load (local.get $qp)))
            (local.set $q2 (v128.load offset=16 (local.get $qp)))
            (local.set $acc0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=0 (local.get $p)) (local.get $q) (local.get $acc0)))
            (local.set $acc1 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=16 (local.get $p)) (local.get $q) (local.get $acc1)))
            (local.set $acc2 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=32 (local.get $p)) (local.get $q) (local.get $acc2)))
            (local.set $acc3 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=48 (local.get $p)) (local.get $q) (local.get $acc3)))
            (local.set $acc4 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=64 (local.get $p)) (local.get $q2) (local.get $acc4)))
            (local.set $acc5 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=80 (local.get $p)) (local.get $q2) (local.get $acc5)))
            (local.set $acc6 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=96 (local.get $p)) (local.get $q2) (local.get $acc6)))
            (local.set $acc7 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=112 (local.get $p)) (local.get $q2) (local.get $acc7)))
            (local.set $p (i32.add (local.get $p) (i32.const 128)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
            (br $each_pair)))
        ;; the last block, when the row has an odd number of them
        (if (i32.lt_u (local.get $p) (local.get $end))
          (then
            (local.set $q (v128.load (local.get $qp)))
            (local.set $acc0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=0 (local.get $p)) (local.get $q) (local.get $acc0)))
            (local.set $acc1 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=16 (local.get $p)) (local.get $q) (local.get $acc1)))
            (local.set $acc2 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=32 (local.get $p)) (local.get $q) (local.get $acc2)))
            (local.set $acc3 (i32x4.relaxed_dot_i8x16_i7x16_add_s (v128.load offset=48 (local.get $p)) (local.get $q) (local.get $acc3)))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (local.get $acc4)))
        (local.set $acc1 (i32x4.add (local.get $acc1) (local.get $acc5)))
        (local.set $acc2 (i32x4.add (local.get $acc2) (local.get $acc6)))
        (local.set $acc3 (i32x4.add (local.get $acc3) (local.get $acc7)))
        (call $store_sum (local.get $out) (local.get $acc0))
        (call $store_sum (i32.add (local.get $out) (i32.const 4)) (local.get $acc1))
        (call $store_sum (i32.add (local.get $out) (i32.const 8)) (local.get $acc2))
        (call $store_sum (i32.add (local.get $out) (i32.const 12)) (local.get $acc3))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $each_group))))

  (func $store_sum (param $at i32) (param $acc v128)
    (i32.store (local.get $at)
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
        (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))))
