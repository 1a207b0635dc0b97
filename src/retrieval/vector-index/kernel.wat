;; Integer dot products of one query against every stored row, with 128-bit SIMD, and the rows they leave in the
;; running for the top k. Several instances (one per thread) may share one memory, each working on its own rows.
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
  ;; imported, so threads can share it (shared: a grown memory stays valid for every instance); at most 4 GiB
  (import "kernel" "memory" (memory 1 65536 shared))

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

  ;; Moves one staged row ($stride bytes at $from) into its place in a group: 16-byte block j to $to + 64*j.
  (func (export "place") (param $from i32) (param $to i32) (param $stride i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $from) (local.get $stride)))
    (block $done
      (loop $each_block
        (br_if $done (i32.ge_u (local.get $from) (local.get $end)))
        (v128.store (local.get $to) (v128.load (local.get $from)))
        (local.set $from (i32.add (local.get $from) (i32.const 16)))
        (local.set $to (i32.add (local.get $to) (i32.const 64)))
        (br $each_block))))

  (func $store_sum (param $at i32) (param $acc v128)
    (i32.store (local.get $at)
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
        (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc))))))

  ;; The rows of one range that may still be among the best k, as rank.ts's argument needs (the arithmetic is the
  ;; one written there: same operations, same order, float64). Per row r < $rows: its dot at $out + 4r (from
  ;; "dots"), its bounds at $bounds + 12r (float32 scale, ‖x − x̂‖, ‖x̂‖, as a code's header). A min-heap of
  ;; min(k, rows) float64 at $heap keeps the largest lower bounds; a row is kept while its upper bound reaches the
  ;; heap's floor as it stands. Kept rows are written over the dots (index r at $out + 4j: j ≤ r, so each dot is read
  ;; before its place is reused) and their upper bounds at $upper + 8j; returns how many were kept.
  (func (export "select") (param $out i32) (param $bounds i32) (param $rows i32) (param $k i32) (param $heap i32)
    (param $upper i32) (param $qScale f64) (param $qResidual f64) (param $qLength f64) (param $slack f64) (result i32)
    (local $r i32) (local $kept i32) (local $approx f64) (local $error f64) (local $lower f64) (local $high f64)
    (local $floor f64)
    (local.set $floor (f64.const -inf))
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        ;; approx = dot · scale · qScale;  error = ‖x − x̂‖·‖q‖ + ‖x̂‖·‖q − q̂‖ + slack
        (local.set $approx (f64.mul
          (f64.mul
            (f64.convert_i32_s (i32.load (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))))
            (f64.promote_f32 (f32.load (local.get $bounds))))
          (local.get $qScale)))
        (local.set $error (f64.add
          (f64.add
            (f64.mul (f64.promote_f32 (f32.load offset=4 (local.get $bounds))) (local.get $qLength))
            (f64.mul (f64.promote_f32 (f32.load offset=8 (local.get $bounds))) (local.get $qResidual)))
          (local.get $slack)))
        (local.set $lower (f64.sub (local.get $approx) (local.get $error)))
        (if (i32.lt_u (local.get $r) (local.get $k))
          (then
            (call $sift_up (local.get $heap) (local.get $r) (local.get $lower))
            (if (i32.eq (local.get $r) (i32.sub (local.get $k) (i32.const 1)))
              (then (local.set $floor (f64.load (local.get $heap))))))
          (else
            (if (f64.gt (local.get $lower) (local.get $floor))
              (then
                (call $sift_down (local.get $heap) (local.get $k) (local.get $lower))
                (local.set $floor (f64.load (local.get $heap)))))))
        (local.set $high (f64.add (local.get $approx) (local.get $error)))
        (if (f64.ge (local.get $high) (local.get $floor))
          (then
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $kept) (i32.const 2))) (local.get $r))
            (f64.store (i32.add (local.get $upper) (i32.shl (local.get $kept) (i32.const 3))) (local.get $high))
            (local.set $kept (i32.add (local.get $kept) (i32.const 1)))))
        (local.set $bounds (i32.add (local.get $bounds) (i32.const 12)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each_row)))
    (local.get $kept))

  ;; Inserts $value as element $at of the min-heap at $heap (elements 0 .. $at-1 already form one).
  (func $sift_up (param $heap i32) (param $at i32) (param $value f64)
    (local $parent i32) (local $above f64)
    (block $done
      (loop $up
        (br_if $done (i32.eqz (local.get $at)))
        (local.set $parent (i32.shr_u (i32.sub (local.get $at) (i32.const 1)) (i32.const 1)))
        (local.set $above (f64.load (i32.add (local.get $heap) (i32.shl (local.get $parent) (i32.const 3)))))
        (br_if $done (f64.le (local.get $above) (local.get $value)))
        (f64.store (i32.add (local.get $heap) (i32.shl (local.get $at) (i32.const 3))) (local.get $above))
        (local.set $at (local.get $parent))
        (br $up)))
    (f64.store (i32.add (local.get $heap) (i32.shl (local.get $at) (i32.const 3))) (local.get $value)))

  ;; Replaces the smallest element (the root) of the min-heap of $size at $heap with $value and restores the heap.
  (func $sift_down (param $heap i32) (param $size i32) (param $value f64)
    (local $i i32) (local $left i32) (local $child i32) (local $below f64)
    (block $done
      (loop $down
        (local.set $left (i32.add (i32.shl (local.get $i) (i32.const 1)) (i32.const 1)))
        (br_if $done (i32.ge_u (local.get $left) (local.get $size)))
        (local.set $child (local.get $left))
        (if (i32.lt_u (i32.add (local.get $left) (i32.const 1)) (local.get $size))
          (then
            (if (f64.lt
                  (f64.load offset=8 (i32.add (local.get $heap) (i32.shl (local.get $left) (i32.const 3))))
                  (f64.load (i32.add (local.get $heap) (i32.shl (local.get $left) (i32.const 3)))))
              (then (local.set $child (i32.add (local.get $left) (i32.const 1)))))))
        (local.set $below (f64.load (i32.add (local.get $heap) (i32.shl (local.get $child) (i32.const 3)))))
        (br_if $done (f64.ge (local.get $below) (local.get $value)))
        (f64.store (i32.add (local.get $heap) (i32.shl (local.get $i) (i32.const 3))) (local.get $below))
        (local.set $i (local.get $child))
        (br $down)))
    (f64.store (i32.add (local.get $heap) (i32.shl (local.get $i) (i32.const 3))) (local.get $value))))
