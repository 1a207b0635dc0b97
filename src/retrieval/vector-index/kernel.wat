;; Integer dot products of one query against every stored row, with 128-bit SIMD.
;;
;; Memory layout (owned by the JS side, see rows.ts):
;;   $query  the query as i16, $stride values (zero past the dimension), 32-byte blocks of 16 values
;;   $rows   rows as i8 in groups of four, interleaved in 16-byte blocks so one group is a single sequential stream:
;;             group g at $rows + g*4*$stride; inside it, block j (bytes 16j..16j+15 of each row) takes 64 bytes:
;;             row 4g+0, row 4g+1, row 4g+2, row 4g+3
;;           (measured: one stream per group is 1.4x faster than four separate row streams once the matrix
;;           no longer fits in cache, and four rows share each query load)
;;   $out    one i32 per row, rows 0 .. 4*$groups-1
;;   a row being stored is staged as $stride plain bytes and moved into its group by "place"
;;
;; Exactness: rows hold values in [-127, 127] and the query values in [-Q, Q] with $stride*127*Q < 2^31 (chosen by
;; the caller), so every product, pair sum and running total fits in i32: the result is the exact integer dot product.
(module
  (memory (export "memory") 1)

  (func (export "dots") (param $query i32) (param $rows i32) (param $groups i32) (param $stride i32) (param $out i32)
    (local $g i32) (local $p i32) (local $end i32) (local $qp i32)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (local $x v128) (local $qlo v128) (local $qhi v128)
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
        (loop $each_block
          ;; 16 query values, already widened to i16: values 0-7 and 8-15 of this block
          (local.set $qlo (v128.load (local.get $qp)))
          (local.set $qhi (v128.load offset=16 (local.get $qp)))
          ;; per row: widen 16 i8 to two i16x8, multiply by the query and add adjacent pairs into i32x4
          (local.set $x (v128.load offset=0 (local.get $p)))
          (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (local.get $qhi)))))
          (local.set $x (v128.load offset=16 (local.get $p)))
          (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (local.get $qhi)))))
          (local.set $x (v128.load offset=32 (local.get $p)))
          (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (local.get $qhi)))))
          (local.set $x (v128.load offset=48 (local.get $p)))
          (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (local.get $qhi)))))
          (local.set $p (i32.add (local.get $p) (i32.const 64)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br_if $each_block (i32.lt_u (local.get $p) (local.get $end))))
        ;; four lanes per accumulator summed into one i32 per row
        (call $store_sum (local.get $out) (local.get $acc0))
        (call $store_sum (i32.add (local.get $out) (i32.const 4)) (local.get $acc1))
        (call $store_sum (i32.add (local.get $out) (i32.const 8)) (local.get $acc2))
        (call $store_sum (i32.add (local.get $out) (i32.const 12)) (local.get $acc3))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $each_group))))

  ;; Moves one staged row ($stride bytes at $from) into its place in a group: 16-byte block j to $to + 64*j; answers
  ;; the sum of its values (the relaxed pass takes 64 times it away, see kernel-relaxed.wat).
  (func (export "place") (param $from i32) (param $to i32) (param $stride i32) (result i32)
    (local $end i32) (local $x v128) (local $sum v128)
    (local.set $end (i32.add (local.get $from) (local.get $stride)))
    (block $done
      (loop $each_block
        (br_if $done (i32.ge_u (local.get $from) (local.get $end)))
        (local.set $x (v128.load (local.get $from)))
        (v128.store (local.get $to) (local.get $x))
        (local.set $sum (i32x4.add (local.get $sum) (i32x4.extadd_pairwise_i16x8_s (i16x8.extadd_pairwise_i8x16_s (local.get $x)))))
        (local.set $from (i32.add (local.get $from) (i32.const 16)))
        (local.set $to (i32.add (local.get $to) (i32.const 64)))
        (br $each_block)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
      (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))

  ;; Copies $count 16-byte blocks, block i from $from + i*$from_step to $to + i*$to_step: a row out of its group
  ;; (steps 64 and 16), into one (16 and 64) or from group to group (64 and 64), for moving rows (rows.ts permute).
  (func (export "copy") (param $from i32) (param $from_step i32) (param $to i32) (param $to_step i32) (param $count i32)
    (block $done
      (loop $each_block
        (br_if $done (i32.eqz (local.get $count)))
        (v128.store (local.get $to) (v128.load (local.get $from)))
        (local.set $from (i32.add (local.get $from) (local.get $from_step)))
        (local.set $to (i32.add (local.get $to) (local.get $to_step)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $each_block))))

  ;; The rows a pass's selection must look at (rank.ts, blocks.ts): of the ceil($count/4)*4 rows whose dot products
  ;; are at $out (one i32 a row), each row i with $out[i] - $shift*$sums[i] > $under, its i appended to $list (one i32
  ;; each, ascending); answers how many. Four rows a step, so the rows' selection skips most of them in a few
  ;; instructions instead of a JavaScript loop's few nanoseconds a row.
  (func (export "above") (param $out i32) (param $sums i32) (param $shift i32) (param $count i32) (param $under i32)
    (param $list i32) (result i32)
    (local $i i32) (local $mask i32) (local $at i32) (local $shiftv v128) (local $underv v128)
    (local.set $shiftv (i32x4.splat (local.get $shift)))
    (local.set $underv (i32x4.splat (local.get $under)))
    (local.set $at (local.get $list))
    (block $done
      (loop $each_four
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $mask (i32x4.bitmask (i32x4.gt_s
          (i32x4.sub (v128.load (local.get $out)) (i32x4.mul (v128.load (local.get $sums)) (local.get $shiftv)))
          (local.get $underv))))
        (if (local.get $mask)
          (then
            (if (i32.and (local.get $mask) (i32.const 1))
              (then (i32.store (local.get $at) (local.get $i)) (local.set $at (i32.add (local.get $at) (i32.const 4)))))
            (if (i32.and (local.get $mask) (i32.const 2))
              (then (i32.store (local.get $at) (i32.add (local.get $i) (i32.const 1))) (local.set $at (i32.add (local.get $at) (i32.const 4)))))
            (if (i32.and (local.get $mask) (i32.const 4))
              (then (i32.store (local.get $at) (i32.add (local.get $i) (i32.const 2))) (local.set $at (i32.add (local.get $at) (i32.const 4)))))
            (if (i32.and (local.get $mask) (i32.const 8))
              (then (i32.store (local.get $at) (i32.add (local.get $i) (i32.const 3))) (local.set $at (i32.add (local.get $at) (i32.const 4)))))))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $sums (i32.add (local.get $sums) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $each_four)))
    (i32.shr_u (i32.sub (local.get $at) (local.get $list)) (i32.const 2)))

  ;; Reads $groups*4*$stride bytes from $rows and does nothing with them but OR them together (answered, so nothing is
  ;; left out): the floor a pass over the same rows cannot go below, for benchmarks (a pass is bound by memory reads).
  (func (export "read") (param $rows i32) (param $groups i32) (param $stride i32) (result i32)
    (local $end i32) (local $acc v128)
    (local.set $end (i32.add (local.get $rows) (i32.mul (local.get $groups) (i32.shl (local.get $stride) (i32.const 2)))))
    (block $done
      (loop $each_block
        (br_if $done (i32.ge_u (local.get $rows) (local.get $end)))
        (local.set $acc (v128.or (local.get $acc) (v128.or
          (v128.or (v128.load offset=0 (local.get $rows)) (v128.load offset=16 (local.get $rows)))
          (v128.or (v128.load offset=32 (local.get $rows)) (v128.load offset=48 (local.get $rows))))))
        (local.set $rows (i32.add (local.get $rows) (i32.const 64)))
        (br $each_block)))
    (i32.or
      (i32.or (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.or (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))

  (func $store_sum (param $at i32) (param $acc v128)
    (i32.store (local.get $at)
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
        (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))))
