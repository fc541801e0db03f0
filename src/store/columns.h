// The columns of each record type, in archive order (internal to the store). One list drives
// both the HDF5 compound tables and the journal's binary encoding, so the two never disagree.
// results/README.md documents every column; keep it in step (and bump kSchemaVersion).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <variant>

#include "tilesweep/store/library.h"
#include "tilesweep/store/provenance.h"
#include "tilesweep/store/schema.h"

namespace ts::store::detail {

// One element of an EngineNs member, stored as its own float64 column (pandas-friendly).
template <class Rec>
struct EngineField {
  EngineNs Rec::*array;
  int engine;
};

template <class Rec>
using Field = std::variant<std::string Rec::*, bool Rec::*, std::int8_t Rec::*, std::int32_t Rec::*,
                           std::int64_t Rec::*, double Rec::*, EngineField<Rec>>;

template <class Rec>
struct Column {
  const char* name;
  Field<Rec> field;
  int since =
      1;  // the schema version that added it: older archives lack it (its value stays default)
};

// Calls f with a reference to the column's value in `rec` (R is Rec or const Rec).
template <class Rec, class R, class F>
decltype(auto) visit_value(const Column<Rec>& col, R& rec, F&& f) {
  return std::visit(
      [&](auto m) -> decltype(auto) {
        if constexpr (std::is_same_v<decltype(m), EngineField<Rec>>) {
          return f((rec.*m.array)[m.engine]);
        } else {
          return f(rec.*m);
        }
      },
      col.field);
}

// Table<Rec>::name is the dataset under the file root; columns() the list, in order.
template <class Rec>
struct Table;

template <>
struct Table<CandidateRecord> {
  static constexpr const char* name = "candidates";
  static std::span<const Column<CandidateRecord>> columns();
};
template <>
struct Table<BestRecord> {
  static constexpr const char* name = "best";
  static std::span<const Column<BestRecord>> columns();
};
template <>
struct Table<ProofRecord> {
  static constexpr const char* name = "proofs";
  static std::span<const Column<ProofRecord>> columns();
};
template <>
struct Table<ProgressRecord> {
  static constexpr const char* name = "progress";
  static std::span<const Column<ProgressRecord>> columns();
};

template <>
struct Table<SourceRecord> {
  static constexpr const char* name = "sources";
  static std::span<const Column<SourceRecord>> columns();
};
template <>
struct Table<OriginRecord> {
  static constexpr const char* name = "best_origin";
  static std::span<const Column<OriginRecord>> columns();
};
template <>
struct Table<LibraryEntry> {
  static constexpr const char* name = "entries";
  static std::span<const Column<LibraryEntry>> columns();
};

}  // namespace ts::store::detail
