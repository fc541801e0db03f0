#!/usr/bin/env python3
"""Validates the hardware target descriptions src/targets/<name>/{target.toml,isa.toml}.

Checks: required keys with sane units (clocks 0.5-5 GHz, byte counts positive integers, fractions
in (0, 1]), a source key in the comment of every target.toml value, every instruction's keys, its
shape patterns, element expression and cost formula (parsed with the element-expression grammar of
include/tilesweep/semantics/expr.h, names resolved, functions known), and that trn1/trn2/trn3
differ where the public documentation says they differ. Exits 1 with one line per problem.

Usage: python3 scripts/check_targets.py [targets_dir]   (Python 3.11+, standard library only)
"""
from __future__ import annotations

import math
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
problems: list[str] = []


def problem(where: str, msg: str) -> None:
    problems.append(f"{where}: {msg}")


# ----------------------------------------------------------------------------------------------
# The element-expression grammar (a mirror of src/semantics/expr.cpp): builds a small AST.
#   expr    := additive [cmp additive]            cmp: <= >= == != < >
#   additive:= mult {(+|-) mult}   mult := unary {(//|*|/|%) unary}   unary := -unary | primary
#   primary := ( expr ) | number | name | name(args) | name[items] | red(v [<|<= expr], expr)
#   pattern := [ pitem, ... ]   pitem := *G{%a|{e}|=a} | n@a | n : e | e, then optional ?flag

class ParseError(Exception):
    pass


REDUCERS = {"sum", "prod", "max", "min"}
PRIMITIVES = {"exp": 1, "log": 1, "sqrt": 1, "tanh": 1, "abs": 1, "sin": 1, "cos": 1,
              "maximum": 2, "minimum": 2}
SPECIAL = {"select", "size", "apply", "reduce", "numel"}


class Parser:
    def __init__(self, text: str):
        self.s, self.i = text, 0

    def err(self, msg: str):
        raise ParseError(f"{msg} at column {self.i + 1} of '{self.s}'")

    def skip(self):
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def peek(self) -> str:
        self.skip()
        return self.s[self.i] if self.i < len(self.s) else ""

    def eat(self, t: str) -> bool:
        self.skip()
        if self.s.startswith(t, self.i):
            self.i += len(t)
            return True
        return False

    def expect(self, t: str):
        if not self.eat(t):
            self.err(f"expected '{t}'")

    def end(self):
        if self.peek():
            self.err(f"unexpected '{self.peek()}'")

    def ident(self) -> str:
        self.skip()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.s, self.i)
        if not m:
            self.err("expected a name")
        self.i = m.end()
        return m.group()

    def expr(self):
        lhs = self.additive()
        for op in ("<=", ">=", "==", "!=", "<", ">"):
            if self.eat(op):
                return ("bin", op, lhs, self.additive())
        return lhs

    def additive(self):
        lhs = self.mult()
        while True:
            if self.eat("+"):
                lhs = ("bin", "+", lhs, self.mult())
            elif self.eat("-"):
                lhs = ("bin", "-", lhs, self.mult())
            else:
                return lhs

    def mult(self):
        lhs = self.unary()
        while True:
            for op in ("//", "*", "/", "%"):
                if self.eat(op):
                    lhs = ("bin", op, lhs, self.unary())
                    break
            else:
                return lhs

    def unary(self):
        if self.eat("-"):
            return ("neg", self.unary())
        return self.primary()

    def primary(self):
        c = self.peek()
        if c == "(":
            self.i += 1
            e = self.expr()
            self.expect(")")
            return e
        m = re.compile(r"(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?").match(self.s, self.i)
        if c and (c.isdigit() or c == ".") and m:
            self.i = m.end()
            return ("num", float(m.group()))
        if not c or not (c.isalpha() or c == "_"):
            self.err(f"unexpected '{c}'" if c else "unexpected end")
        name = self.ident()
        if self.eat("("):
            if name in REDUCERS:
                var = self.ident()
                bound = None
                if self.eat("<="):
                    bound = ("le", self.expr())
                elif self.eat("<"):
                    bound = ("lt", self.expr())
                self.expect(",")
                body = self.expr()
                self.expect(")")
                return ("red", name, var, bound, body)
            args = []
            if not self.eat(")"):
                args.append(self.expr())
                while self.eat(","):
                    args.append(self.expr())
                self.expect(")")
            return ("call", name, args)
        if self.eat("["):
            items = []
            if not self.eat("]"):
                items.append(self.item(access=True))
                while self.eat(","):
                    items.append(self.item(access=True))
                self.expect("]")
            return ("access", name, items)
        return ("name", name)

    def item(self, access: bool):
        if self.eat("*"):
            it = {"group": self.ident()}
            while True:
                if self.eat("%"):
                    it["permute"] = self.ident()
                elif self.eat("{"):
                    it["each"] = self.expr()
                    self.expect("}")
                elif not access and self.eat("="):
                    it["from"] = self.ident()
                elif access and self.eat("~"):
                    it["reshape"] = self.ident()
                else:
                    break
        else:
            it = None
            save = self.i
            c = self.peek()
            if not access and c and (c.isalpha() or c == "_"):
                name = self.ident()
                if self.eat("@"):
                    it = {"name": name, "position": self.ident()}
                elif self.peek() == ":":
                    self.i += 1
                    it = {"name": name, "size": self.expr()}
                else:
                    self.i = save
            if it is None:
                e = self.expr()
                it = {"expr": e}
                if not access and e[0] == "name":
                    it["name"] = e[1]
        if not access and self.eat("?"):
            it["flag"] = self.ident()
        return it


def parse_expr(text: str):
    p = Parser(text)
    e = p.expr()
    p.end()
    return e


def parse_pattern(text: str):
    p = Parser(text)
    p.expect("[")
    items = []
    if not p.eat("]"):
        items.append(p.item(access=False))
        while p.eat(","):
            items.append(p.item(access=False))
        p.expect("]")
    p.end()
    return items


def pattern_dims(items) -> list[str]:
    return [it["name"] for it in items if "name" in it and "group" not in it]


# ----------------------------------------------------------------------------------------------
# Op names from ops.toml, for the activation functions and ALU ops an instruction may apply.

def load_ops() -> dict[str, int]:
    """Element-wise ops of ops.toml without attributes: name -> operand count."""
    path = ROOT / "src/semantics/ops.toml"
    ops = tomllib.loads(path.read_text())["op"]
    out = {}
    for name, t in ops.items():
        if t.get("attrs") or "out" in t or any(v != "[*S]" for v in t.get("shape", {}).values()):
            continue
        out[name] = len(t.get("operands", []))
    return out


# ----------------------------------------------------------------------------------------------
# isa.toml

OP_KEYS = {"doc", "operands", "attrs", "args", "shape", "broadcast", "out", "contract", "requires",
           "expr", "fold", "funcs", "binops", "reduceops"}
INSTR_KEYS = OP_KEYS | {"engines", "memory", "limits", "cost", "source", "nki", "nki_current", "elementwise"}
REQUIRED_INSTR_KEYS = ["doc", "operands", "out", "expr", "engines", "memory", "cost", "source"]
ATTR_TYPES = {"bool", "int", "float", "dim", "dims", "axis", "axes", "name", "func", "binop", "reduceop"}
ENGINES = {"tensor", "vector", "scalar", "gpsimd", "dma"}
MEMORIES = {"sbuf", "psum", "hbm"}
REDUCE_KINDS = {"add", "mul", "max", "min"}
COST_VARS = {"N", "P", "MIN_II", "fp32", "bytes", "psum_sbuf"}
SOURCE_KEY = re.compile(r"\b(A[1-3]|H[1-7]|HV1|I[1-4]h?|P[1-6]|S[0-4]|L[12]|C[1-5]|T[1-3]|R1|K[1-4]|N1|X[1-8]|"
                        r"DERIVED|ASSUMPTION|FITTED)\b")


class ExprChecker:
    """Resolves the names of an element expression the way instantiate.cpp does."""

    def __init__(self, where, operands, patterns, attrs, out_dims):
        self.where, self.operands, self.patterns = where, operands, patterns
        self.attrs = attrs  # name -> attr table
        self.out_dims = set(out_dims)
        self.in_dims = {d for p in patterns.values() for d in pattern_dims(p)}

    def bad(self, msg):
        problem(self.where, msg)

    def check(self, e, bound: set[str]):
        kind = e[0]
        if kind == "num":
            return
        if kind == "name":
            n = e[1]
            if n in bound or n in self.out_dims or n in self.attrs:
                return
            if n in self.operands:  # a bare operand is indexed by its own pattern's dims
                for d in pattern_dims(self.patterns.get(n, [])):
                    if d not in bound and d not in self.out_dims:
                        self.bad(f"bare '{n}' needs the index '{d}', which is neither an output dim nor bound "
                                 f"by a reduction here")
                return
            if n in self.in_dims:
                self.bad(f"'{n}' is a dim, not an index here (bind it with a reduction, or write size({n}))")
            else:
                self.bad(f"unknown name '{n}' in the expression")
            return
        if kind == "neg":
            return self.check(e[1], bound)
        if kind == "bin":
            self.check(e[2], bound)
            self.check(e[3], bound)
            return
        if kind == "red":
            _, red, var, rng, body = e
            if rng is None and var not in self.in_dims:
                self.bad(f"{red}({var}, ...) reduces over '{var}', which is not an operand dim")
            if rng is not None:
                self.check(rng[1], bound)
            return self.check(body, bound | {var})
        if kind == "access":
            _, name, items = e
            if name not in self.operands:
                self.bad(f"'{name}[...]' accesses '{name}', which is not an operand")
                return
            pat = self.patterns[name]
            if not any("group" in it for it in pat) and len(items) != len(pat):
                self.bad(f"'{name}' has rank {len(pat)} but is accessed with {len(items)} indices")
            for it in items:
                if "expr" in it:
                    self.check(it["expr"], bound)
            return
        if kind == "call":
            _, fn, args = e
            if fn in PRIMITIVES:
                if len(args) != PRIMITIVES[fn]:
                    self.bad(f"{fn} takes {PRIMITIVES[fn]} argument(s), got {len(args)}")
            elif fn == "select":
                if len(args) != 3:
                    self.bad("select takes (condition, then, else)")
            elif fn == "size":
                if len(args) != 1 or args[0][0] != "name" or args[0][1] not in self.in_dims | self.out_dims:
                    self.bad("size() takes one dim name")
                return
            elif fn == "apply":
                return self.check_apply(args, bound)
            elif fn == "reduce":
                return self.check_reduce(args, bound)
            else:
                self.bad(f"unknown function '{fn}' (known: {', '.join(sorted(PRIMITIVES))}, select, size, "
                         f"apply, reduce, sum/prod/max/min)")
                return
            for a in args:
                self.check(a, bound)

    def name_attr(self, fn, arg, types):
        if arg[0] != "name" or arg[1] not in self.attrs:
            self.bad(f"{fn}() needs an attribute name first")
            return None
        a = self.attrs[arg[1]]
        if a.get("type") not in types:
            self.bad(f"{fn}() needs an attribute of type {' or '.join(types)}, '{arg[1]}' is {a.get('type')}")
            return None
        return a

    def check_apply(self, args, bound):
        if not args:
            self.bad("apply takes (attribute, arguments...)")
            return
        a = self.name_attr("apply", args[0], ("func", "binop", "name"))
        if a is not None:
            want = {"func": 1, "binop": 2}.get(a["type"])
            if want is not None and len(args) - 1 != want:
                self.bad(f"apply({args[0][1]}, ...) of a {a['type']} takes {want} argument(s), got {len(args) - 1}")
        for x in args[1:]:
            self.check(x, bound)

    def check_reduce(self, args, bound):
        if len(args) != 3 or args[1][0] != "name":
            self.bad("reduce takes (attribute, dim, body)")
            return
        self.name_attr("reduce", args[0], ("reduceop",))
        if args[1][1] not in self.in_dims:
            self.bad(f"reduce over '{args[1][1]}', which is not an operand dim")
        self.check(args[2], bound | {args[1][1]})


def cost_names(e, out: set[str], calls: set[str]):
    kind = e[0]
    if kind == "name":
        out.add(e[1])
    elif kind == "neg":
        cost_names(e[1], out, calls)
    elif kind == "bin":
        cost_names(e[2], out, calls)
        cost_names(e[3], out, calls)
    elif kind == "call":
        calls.add(e[1])
        for a in e[2]:
            cost_names(a, out, calls)
    elif kind in ("red", "access"):
        calls.add(kind)


def evaluate(e, env):
    kind = e[0]
    if kind == "num":
        return e[1]
    if kind == "name":
        return env[e[1]]
    if kind == "neg":
        return -evaluate(e[1], env)
    if kind == "bin":
        a, b = evaluate(e[2], env), evaluate(e[3], env)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
                "//": lambda: a // b, "%": lambda: a % b, "<": lambda: float(a < b), "<=": lambda: float(a <= b),
                ">": lambda: float(a > b), ">=": lambda: float(a >= b), "==": lambda: float(a == b),
                "!=": lambda: float(a != b)}[e[1]]()
    if kind == "call":
        v = [evaluate(a, env) for a in e[2]]
        if e[1] == "select":
            return v[1] if v[0] else v[2]
        return {"maximum": max, "minimum": min}[e[1]](*v) if e[1] in ("maximum", "minimum") else \
            getattr(math, e[1] if e[1] != "abs" else "fabs")(*v)
    raise ValueError(kind)


def check_instr(where: str, name: str, t: dict, ops: dict[str, int]):
    for k in t:
        if k not in INSTR_KEYS:
            problem(where, f"unknown key '{k}' (allowed: {', '.join(sorted(INSTR_KEYS))})")
    for k in REQUIRED_INSTR_KEYS:
        if k not in t:
            problem(where, f"missing key '{k}'")
    if any(k not in t for k in ("operands", "out", "expr", "engines", "cost")):
        return
    operands = t["operands"]
    if not isinstance(operands, list) or not all(isinstance(o, str) for o in operands):
        problem(where, "operands must be a list of names")
        return
    if not isinstance(t.get("doc", ""), str) or not t.get("doc"):
        problem(where, "doc must be a non-empty string")
    if not isinstance(t.get("source"), str) or not SOURCE_KEY.search(t.get("source", "")):
        problem(where, "source must name at least one source key (e.g. 'S0; A1')")

    # attributes
    attrs = {}
    for a in t.get("attrs", []):
        if not isinstance(a, dict) or "name" not in a or "type" not in a:
            problem(where, "each attribute needs a name and a type")
            continue
        if a["type"] not in ATTR_TYPES:
            problem(where, f"attribute '{a['name']}' has unknown type '{a['type']}'")
        for k in a:
            if k not in ("name", "type", "of", "default", "choices"):
                problem(where, f"attribute '{a['name']}' has unknown key '{k}'")
        attrs[a["name"]] = a
        if a["type"] in ("func", "binop", "reduceop"):
            choices = a.get("choices") or t.get(a["type"] + "s")
            if not choices:
                problem(where, f"attribute '{a['name']}' of type {a['type']} needs `choices` or `{a['type']}s`")
                continue
            for c in choices:
                if a["type"] == "func" and ops.get(c) != 1:
                    problem(where, f"function '{c}' is not a one-operand element-wise op of ops.toml")
                if a["type"] == "binop" and ops.get(c) != 2:
                    problem(where, f"ALU op '{c}' is not a two-operand element-wise op of ops.toml")
                if a["type"] == "reduceop" and c not in REDUCE_KINDS:
                    problem(where, f"reduction '{c}' is not one of {', '.join(sorted(REDUCE_KINDS))}")
            if "default" in a and a["default"] not in choices:
                problem(where, f"default '{a['default']}' of '{a['name']}' is not among its choices")

    # shape patterns
    patterns = {}
    shapes = t.get("shape", {})
    for k in shapes:
        if k not in operands:
            problem(where, f"shape given for '{k}', which is not an operand")
    for o in operands:
        if o not in shapes:
            problem(where, f"no shape pattern for operand '{o}' (isa entries spell their tiles out)")
            continue
        try:
            patterns[o] = parse_pattern(shapes[o])
        except ParseError as e:
            problem(where, f"shape of '{o}': {e}")
    try:
        out = parse_pattern(t["out"])
    except ParseError as e:
        problem(where, f"out: {e}")
        return
    in_dims = {d for p in patterns.values() for d in pattern_dims(p)}
    out_dims = pattern_dims(out)
    for it in out:
        if "size" in it:
            sz_names: set[str] = set()
            cost_names(it["size"], sz_names, set())
            for n in sz_names:
                if n not in in_dims and not (n in attrs and attrs[n]["type"] in ("dim", "int")):
                    problem(where, f"output size '{n}' is neither an operand dim nor a dim/int attribute")
    for c in t.get("contract", []):
        if c not in in_dims or c in out_dims:
            problem(where, f"contract lists '{c}', which is not an operand dim missing from the output")

    # element expression
    try:
        e = parse_expr(t["expr"])
        ExprChecker(where, operands, patterns, attrs, out_dims).check(e, set())
    except ParseError as err:
        problem(where, f"expr: {err}")

    # engines, memories, limits
    engines = t["engines"]
    if not isinstance(engines, list) or not engines or any(x not in ENGINES for x in engines):
        problem(where, f"engines must be a non-empty list of {', '.join(sorted(ENGINES))}")
        engines = []
    is_dma = "dma" in engines
    if is_dma and len(engines) > 1:
        problem(where, "a DMA instruction runs on the DMA engines only")
    mem = t.get("memory", {})
    for k, v in mem.items():
        if k != "out" and k not in operands:
            problem(where, f"memory given for '{k}', which is not an operand or out")
        if not isinstance(v, list) or not v or any(m not in MEMORIES for m in v):
            problem(where, f"memory of '{k}' must be a non-empty list of sbuf, psum, hbm")
        elif "hbm" in v and not is_dma:
            problem(where, f"'{k}' in HBM: only DMA instructions reach HBM")
    for k in operands + ["out"]:
        if k not in mem:
            problem(where, f"no memory list for '{k}'")
    limits = t.get("limits", {})
    if not is_dma and not limits:
        problem(where, "compute instructions need limits (max size per pattern dim)")
    for k, v in limits.items():
        if k not in in_dims and k not in out_dims:
            problem(where, f"limit given for '{k}', which is not a dim of its patterns")
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            problem(where, f"limit of '{k}' must be a positive integer")
        elif "p" == k and v > 128:
            problem(where, f"partition limit {v} exceeds 128 partitions")

    # cost
    try:
        c = parse_expr(t["cost"])
    except ParseError as err:
        problem(where, f"cost: {err}")
        return
    names, calls = set(), set()
    cost_names(c, names, calls)
    allowed = in_dims | set(out_dims) | COST_VARS
    for n in sorted(names - allowed):
        problem(where, f"cost uses '{n}' (allowed: pattern dims, {', '.join(sorted(COST_VARS))})")
    for f in sorted(calls - {"maximum", "minimum", "select"} - set(PRIMITIVES)):
        problem(where, f"cost uses '{f}' (allowed functions: maximum, minimum, select and the primitives)")
    if ("bytes" in names) != is_dma:
        problem(where, "DMA costs are in bytes (use `bytes`); compute costs are engine cycles (no `bytes`)")
    if problems and problems[-1].startswith(where + ": cost"):
        return
    env = {d: float(limits.get(d, 128)) for d in in_dims | set(out_dims)}
    env.update(N=512.0, P=128.0, MIN_II=64.0, bytes=65536.0)
    for fp32, psum_sbuf in ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)):
        env["fp32"], env["psum_sbuf"] = fp32, psum_sbuf
        try:
            v = evaluate(c, env)
        except Exception as err:  # noqa: BLE001 - any evaluation failure is a problem
            problem(where, f"cost cannot be evaluated at the limits: {err}")
            return
        if not (math.isfinite(v) and v > 0):
            problem(where, f"cost evaluates to {v} at the limits (fp32={int(fp32)}, "
                    f"psum_sbuf={int(psum_sbuf)}); expected a positive number")


def check_legality(where: str, leg: dict, instrs: dict) -> None:
    """[legality]: per-engine memories and ALU operators, instruction requirements, each with a source."""
    engines, memories = {"tensor", "vector", "scalar", "gpsimd", "dma"}, {"sbuf", "psum", "hbm"}
    for k in leg:
        if k not in ("engine", "require", "alu_attributes"):
            problem(where, f"unknown key 'legality.{k}'")
    for name, rules in leg.get("engine", {}).items():
        w = f"{where}: legality.engine.{name}"
        if name not in engines:
            problem(w, "unknown engine")
        if not str(rules.get("source", "")).strip():
            problem(w, "no source")
        for m in rules.get("memory", []):
            if m not in memories:
                problem(w, f"unknown memory '{m}'")
        if "div" in rules.get("alu", []):
            problem(w, "lists 'div': the documented operator table (S2) has no divide")
    for row in leg.get("require", []):
        w = f"{where}: legality.require {row.get('instr')}"
        if row.get("instr") not in instrs:
            problem(w, "names no instruction of this ISA")
        if row.get("engine") not in engines or not row.get("require") or not str(row.get("source", "")).strip():
            problem(w, "needs engine, require and source")


def check_isa(path: Path, ops) -> dict:
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        problem(str(path), f"not valid TOML: {e}")
        return {}
    for k in doc:
        if k not in ("instr", "nki", "legality"):
            problem(str(path), f"unknown top-level key '{k}' (instructions go in [instr.NAME])")
    instrs = doc.get("instr", {})
    check_legality(str(path), doc.get("legality", {}), instrs)
    if not instrs:
        problem(str(path), "no [instr.NAME] tables")
    for name, t in instrs.items():
        check_instr(f"{path}: instr.{name}", name, t, ops)
    missing = [n for n in ("dma_copy", "tensor_copy", "nc_transpose_pe", "nc_transpose_dve", "nc_matmul",
                           "activation", "activation_reduce", "reciprocal", "tensor_tensor", "tensor_scalar",
                           "scalar_tensor_tensor", "tensor_reduce", "tensor_partition_reduce",
                           "tensor_scalar_reduce", "tensor_tensor_scan", "memset", "iota", "affine_select")
               if n not in instrs]
    if missing:
        problem(str(path), f"missing instructions: {', '.join(missing)}")
    return instrs


# ----------------------------------------------------------------------------------------------
# target.toml

def check_target(path: Path) -> dict:
    where = str(path)
    text = path.read_text()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        problem(where, f"not valid TOML: {e}")
        return {}

    def get(dotted: str):
        node = doc
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                problem(where, f"missing key '{dotted}'")
                return None
            node = node[part]
        return node

    def number(key, lo, hi, integer=False):
        v = get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
            problem(where, f"'{key}' must be {'an integer' if integer else 'a number'}, got {v!r}")
            return None
        if not lo <= v <= hi:
            problem(where, f"'{key}' = {v} is outside [{lo:g}, {hi:g}]")
        return v

    for k in ("name", "core"):
        if not isinstance(get(k), str):
            problem(where, f"'{k}' must be a string")
    if doc.get("name") != path.parent.name:
        problem(where, f"name '{doc.get('name')}' must equal the folder name '{path.parent.name}'")
    number("chip.neuron_cores", 1, 64, True)
    number("chip.hbm_bytes_per_s", 1e10, 1e14)
    number("chip.dma_engines", 1, 4096, True)
    stacks = number("chip.hbm_stacks", 1, 64, True)
    cores = doc.get("chip", {}).get("neuron_cores")
    if isinstance(stacks, int) and isinstance(cores, int) and stacks > 0 and cores % stacks:
        problem(where, f"chip.hbm_stacks = {stacks} must divide chip.neuron_cores = {cores}")
    lnc = get("chip.lnc")
    if lnc is not None and (not isinstance(lnc, list) or not lnc or any(x not in (1, 2) for x in lnc) or 1 not in lnc):
        problem(where, f"'chip.lnc' must list logical-core options from {{1, 2}} including 1, got {lnc!r}")
    for key in ("sbuf.partitions", "psum.partitions"):
        number(key, 1, 1024, True)
    for key in ("sbuf.bytes_per_partition", "sbuf.usable_bytes_per_partition", "sbuf.min_align_bytes",
                "psum.bytes_per_partition", "psum.bank_bytes"):
        number(key, 1, 1 << 30, True)
    number("sbuf.access_init_cycles", 0, 10000, True)
    number("sbuf.full_rate_stride_bytes", 1, 4096, True)
    number("psum.banks", 1, 64, True)
    sb = doc.get("sbuf", {})
    if isinstance(sb.get("usable_bytes_per_partition"), int) and isinstance(sb.get("bytes_per_partition"), int) \
            and sb["usable_bytes_per_partition"] > sb["bytes_per_partition"]:
        problem(where, "sbuf.usable_bytes_per_partition exceeds sbuf.bytes_per_partition")
    ps = doc.get("psum", {})
    if all(isinstance(ps.get(k), int) for k in ("banks", "bank_bytes", "bytes_per_partition")) \
            and ps["banks"] * ps["bank_bytes"] != ps["bytes_per_partition"]:
        problem(where, "psum.banks * psum.bank_bytes must equal psum.bytes_per_partition")
    for eng in ("tensor", "vector", "scalar", "gpsimd"):
        number(f"engine.{eng}.clock_hz", 0.5e9, 5e9)
        number(f"engine.{eng}.elements_per_cycle", 1, 65536, True)
    for key in ("min_ii_cycles", "mm_init_cycles", "vector_fixed_cycles", "gpsimd_start_cycles",
                "dynamic_address_cycles", "psum_read_cycles"):
        number(f"overheads.{key}", 0, 1e5)
    number("overheads.semaphore_ns", 0, 1e5)
    number("overheads.core_barrier_ns", 0, 1e5)
    number("dma.engines_per_core", 1, 1024, True)
    number("dma.queues_per_engine", 1, 1024, True)
    number("dma.bytes_per_ns_per_engine", 1, 1000)
    number("dma.start_ns", 0, 1e5)
    number("dma.dge_ns", 0, 1e5)
    number("dma.transpose_fraction_hbm", 0, 1)
    number("dma.transpose_fraction_sbuf", 0, 1)
    eff = get("dma.efficiency")
    if eff is not None:
        ok = isinstance(eff, list) and len(eff) >= 2
        last_x = -1
        for row in eff if ok else []:
            if not (isinstance(row, list) and len(row) == 2 and all(isinstance(v, (int, float)) for v in row)):
                ok = False
                break
            if row[0] <= last_x or not 0 < row[1] <= 1:
                problem(where, f"dma.efficiency row {row}: sizes must increase and fractions lie in (0, 1]")
            last_x = row[0]
        if not ok:
            problem(where, "dma.efficiency must be a list of [bytes_per_partition, fraction] rows")
        elif eff[-1][1] != 1.0 or any(b[1] < a[1] for a, b in zip(eff, eff[1:])):
            problem(where, "dma.efficiency must not decrease and must reach 1.0 (the practical peak)")
    number("roofline.hbm_bytes_per_s", 1e10, 1e14)
    number("roofline.matmul_flops_fp32", 1e12, 1e16)
    number("roofline.matmul_flops_bf16", 1e12, 1e16)
    number("roofline.vector_flops", 1e9, 1e15)
    topo = get("mesh.topology")
    if topo is not None and topo not in ("ring", "torus", "switch"):
        problem(where, f"mesh.topology must be ring, torus or switch, got {topo!r}")
    number("mesh.devices_per_node", 1, 4096, True)
    number("mesh.links_per_device", 1, 64, True)
    number("mesh.link_bytes_per_s", 1e9, 1e14)
    number("mesh.intra_hop_latency_ns", 0, 1e7)
    number("mesh.inter_node_latency_ns", 0, 1e8)
    number("mesh.efa_bytes_per_s", 1e9, 1e14)
    rf, ch = doc.get("roofline", {}), doc.get("chip", {})
    if isinstance(rf.get("hbm_bytes_per_s"), (int, float)) and isinstance(ch.get("hbm_bytes_per_s"), (int, float)) \
            and rf["hbm_bytes_per_s"] > ch["hbm_bytes_per_s"]:
        problem(where, "roofline.hbm_bytes_per_s (per core) exceeds chip.hbm_bytes_per_s")

    # every value carries its source: a trailing comment, or the comment block just above it
    comment_above = ""
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("#"):
            comment_above += " " + s
            continue
        m = re.match(r"([A-Za-z_][\w.]*)\s*=", s)
        if m and m.group(1) != "name":
            trailing = line.split("#", 1)[1] if "#" in line else ""
            if not SOURCE_KEY.search(trailing) and not SOURCE_KEY.search(comment_above):
                problem(f"{where}:{n}", f"'{m.group(1)}' has no source key in its comment")
        if m or not s or s.startswith("["):
            comment_above = ""
    return doc


# ----------------------------------------------------------------------------------------------
# The three generations differ where the documentation says they differ.

def check_generations(targets: dict, isas: dict):
    need = ("trn1", "trn2", "trn3")
    if not all(n in targets and targets[n] and n in isas for n in need):
        problem("src/targets", "trn1, trn2 and trn3 must all be present")
        return
    t1, t2, t3 = (targets[n] for n in need)
    i1, i2, i3 = (isas[n] for n in need)

    def expect(ok, msg):
        if not ok:
            problem("generations", msg)

    def g(doc, dotted):
        for part in dotted.split("."):
            doc = doc.get(part, {}) if isinstance(doc, dict) else {}
        return doc

    expect(g(t1, "core") == "NeuronCore-v2" and g(t2, "core") == "NeuronCore-v3" and g(t3, "core") == "NeuronCore-v4",
           "cores must be NeuronCore-v2 / v3 / v4 (A1, A2, A3)")
    expect([g(t, "chip.neuron_cores") for t in (t1, t2, t3)] == [2, 8, 8], "NeuronCores per chip 2 / 8 / 8 (A1-A3)")
    expect(g(t1, "chip.lnc") == [1] and 2 in g(t2, "chip.lnc") and 2 in g(t3, "chip.lnc"),
           "LNC=2 exists on trn2 and trn3 only (L1)")
    expect(g(t1, "chip.hbm_bytes_per_s") < g(t2, "chip.hbm_bytes_per_s") < g(t3, "chip.hbm_bytes_per_s"),
           "chip HBM bandwidth grows trn1 < trn2 < trn3 (§1)")
    expect(g(t1, "chip.dma_engines") == 32 and g(t2, "chip.dma_engines") == g(t3, "chip.dma_engines") == 128,
           "DMA engines per chip 32 / 128 / 128 (A1-A3)")
    expect([g(t, "sbuf.bytes_per_partition") for t in (t1, t2, t3)] == [196608, 229376, 262144],
           "SBUF 192 / 224 / 256 KiB per partition (A1-A3)")
    expect(g(t1, "engine.tensor.clock_hz") > g(t2, "engine.tensor.clock_hz") == g(t3, "engine.tensor.clock_hz"),
           "TensorE clock 2.8 GHz on NC-v2, 2.4 on NC-v3/v4 (§2.1)")
    expect(g(t2, "engine.vector.clock_hz") < g(t1, "engine.vector.clock_hz") < g(t3, "engine.vector.clock_hz"),
           "VectorE clock 0.96 (trn2) < 1.12 (trn1) < 1.2 GHz (trn3) (§2.1)")
    expect(g(t1, "dma.bytes_per_ns_per_engine") < g(t2, "dma.bytes_per_ns_per_engine")
           < g(t3, "dma.bytes_per_ns_per_engine"), "practical DMA rate 17 < 23 < 33 B/ns (P2)")
    expect(g(t1, "dma.dge_ns") == 0 and g(t2, "dma.dge_ns") > 0 and g(t3, "dma.dge_ns") > 0,
           "hardware DGE from NC-v3 on only (A2, P4)")
    expect(g(t1, "dma.transpose_fraction_hbm") == 0 and g(t1, "dma.transpose_fraction_sbuf") == 0
           and all(0 < g(t, f"dma.transpose_fraction_{m}") <= 1 for t in (t2, t3) for m in ("hbm", "sbuf")),
           "DMA transpose fractions 0 on trn1, in (0, 1] on trn2/trn3 (A2)")
    expect(g(t3, "mesh.topology") == "switch" and g(t1, "mesh.topology") == g(t2, "mesh.topology") == "torus",
           "torus on trn1/trn2, NeuronSwitch on trn3 (I1-I3)")
    expect("dma_transpose" not in i1 and "dma_transpose" in i2 and "dma_transpose" in i3,
           "dma_transpose exists from NC-v3 on (S1, A2)")
    n_lim = [i.get("nc_matmul", {}).get("limits", {}).get("n") for i in (i1, i2, i3)]
    expect(n_lim == [512, 512, 4096], f"nc_matmul moving free limit 512 / 512 / 4096 (A1, S1, A3), got {n_lim}")
    eng = lambda i, n: set(i.get(n, {}).get("engines", []))  # noqa: E731
    expect("gpsimd" not in eng(i1, "activation") and "gpsimd" not in eng(i2, "activation")
           and "gpsimd" in eng(i3, "activation"), "activation on GpSimd from NC-v4 on only (§4)")
    expect("scalar" not in eng(i1, "tensor_copy") and "scalar" in eng(i2, "tensor_copy")
           and "scalar" in eng(i3, "tensor_copy"), "tensor_copy on ScalarE from NC-v3 on only (§4)")
    expect("tensor_scalar_act" not in i1 and "tensor_scalar_act" in i2 and "tensor_scalar_act" in i3,
           "tensor_scalar on ScalarE from NC-v3 on only (§4)")
    expect("exponential" not in i1 and "exponential" not in i2 and "exponential" in i3,
           "VectorE exponential on NC-v4 only (A3)")


def main() -> int:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "src/targets"
    ops = load_ops()
    targets, isas = {}, {}
    dirs = sorted(d for d in base.iterdir() if d.is_dir())
    if not dirs:
        problem(str(base), "no target folders")
    for d in dirs:
        for f in ("target.toml", "isa.toml"):
            if not (d / f).is_file():
                problem(str(d), f"missing {f}")
        if (d / "target.toml").is_file():
            targets[d.name] = check_target(d / "target.toml")
        if (d / "isa.toml").is_file():
            isas[d.name] = check_isa(d / "isa.toml", ops)
    check_generations(targets, isas)
    if problems:
        for p in problems:
            print(f"error: {p}", file=sys.stderr)
        print(f"check_targets: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    n = sum(len(i) for i in isas.values())
    print(f"check_targets: OK - {len(targets)} targets ({', '.join(sorted(targets))}), {n} instruction entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
