// An element-wise instruction and the reduction of its result, issued as one instruction (issue
// 17): NKI's activation_reduce writes func(x * scale + bias) (dst) and its sum along the free dim
// (reduce_res) in one pass, tensor_scalar_reduce likewise for (x op0 operand0). isa.toml says so
// per reducing instruction (`elementwise`, instr_spec.h; the identity is proved with Z3 in
// tests/lower/reduction_fusion_test.cpp). A softmax row's exp and its row sum then cost the
// Scalar engine one pass instead of two.
//
// The program keeps both instructions (the functional interpreter and every dependency analysis
// run them as they are); the reduction R is marked as riding on the element-wise instruction A
// (Inst::rides, Inst::fused). The timeline runs R on A's engine right after A (A waits for R's
// output to be writable, as the fused instruction would) and charges the fused instruction's cost
// less A's; the NKI emitter prints A as the fused call (dst = A's tile, reduce_res = R's) and
// nothing for R.
#pragma once

#include "tilesweep/lower/program.h"
#include "tilesweep/target/target.h"

namespace ts::lower {

// Marks each reduction of `p` that can ride on the element-wise instruction whose result it
// reduces, and clears the marks that no longer hold (idempotent: run after every change of
// engines or forms, at the end of materialize and of rebind; after software pipelining). A pair
// A -> R qualifies when
//   - R reduces its operand 0 as it is (Inst::reduces) and reads it at lag 0 through exactly the
//     window A writes; A is the last writer of that buffer before R in the same block;
//   - no item between them (nested loops included) writes A's or R's operands or R's output, or
//     reads R's output; neither accumulates or repeats, R's output is none of the operands;
//   - the target has an instruction F whose `elementwise` names A's instruction, runs on A's
//     engine and reduces with R's reducer, whose attributes take A's values (an attribute of A
//     that F lacks at A's default), whose operand and output memories and limits allow A's
//     operands and R's output, and which keeps the target's [legality] rules there.
// Linear in the program's size; nothing is allocated where no instruction reduces.
void fuse_reductions(Program& p, const target::Target& t);

// The one instruction rider `r` (Inst::rides >= 0) runs fused as: its `fused` instruction on
// the operands, windows, attributes and engine of the instruction it rides on (F's reducer
// attribute set to R's reducer), writing R's output.
Inst fused_instruction(const Program& p, int r);

// The number of instructions of `p` that ride on another.
int riders(const Program& p);

}  // namespace ts::lower
