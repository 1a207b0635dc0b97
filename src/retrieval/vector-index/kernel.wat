;; int8 dot products of one query against every row of a matrix, four rows' worth of work per SIMD step.
;; Memory layout (owned by the JS side): the query at $q, the rows at $m (each $stride bytes, a multiple of 16),
;; one i32 result per row written at $out.
(module
  (memory (export "memory") 1)
  (func (export "dots") (param $q i32) (param $m i32) (param $rows i32) (param $stride i32) (param $out i32)
    (local $row i32) (local $end i32) (local $p i32) (local $qp i32) (local $acc v128) (local $a v128) (local $b v128)
    (local $r i32)
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $row (i32.add (local.get $m) (i32.mul (local.get $r) (local.get $stride))))
        (local.set $end (i32.add (local.get $row) (local.get $stride)))
        (local.set $p (local.get $row))
        (local.set $qp (local.get $q))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $row_done
          (loop $each_block
            (br_if $row_done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $a (v128.load (local.get $p)))
            (local.set $b (v128.load (local.get $qp)))
            ;; widen to i16 and multiply-add pairs into i32 lanes: exact, no overflow for 16 products
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b)))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 16)))
            (br $each_block)))
        (i32.store
          (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each_row)))))
