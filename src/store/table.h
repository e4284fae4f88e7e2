#pragma once
// A stored record described once: a table lists, in column order, each field's
// column name, SQL declaration and JSON key, and the member it lives in. The
// CREATE TABLE text, the column lists, the statement binders and the row
// readers all come from that list (and the JSON forms, in rpc/records.cc), so
// a field is added in one line.
//
// A column added to a table that existing files already have also needs a
// migration step that adds it (ALTER TABLE ... ADD COLUMN): a file created by
// an older bk never runs this version's CREATE TABLE.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/enum_names.h"
#include "base/result.h"
#include "base/strings.h"
#include "store/sqlite.h"

namespace bk::store {

// "0,2,3" as stored in the gpus columns (JoinInts); anything but digits and commas is skipped.
std::vector<int> ParseGpus(const std::string& text);

// How a member of type T is bound to a column and read back from one.
template <class T>
struct SqlValue;
template <>
struct SqlValue<std::string> {
  static void Bind(Stmt& st, int i, const std::string& v) { st.Bind(i, v); }
  static std::string Read(const Stmt& s, int i) { return s.Text(i); }
};
template <>
struct SqlValue<int64_t> {
  static void Bind(Stmt& st, int i, int64_t v) { st.Bind(i, v); }
  static int64_t Read(const Stmt& s, int i) { return s.Int(i); }
};
template <>
struct SqlValue<int> {
  static void Bind(Stmt& st, int i, int v) { st.Bind(i, int64_t{v}); }
  static int Read(const Stmt& s, int i) { return static_cast<int>(s.Int(i)); }
};
template <>
struct SqlValue<uint32_t> {
  static void Bind(Stmt& st, int i, uint32_t v) { st.Bind(i, int64_t{v}); }
  static uint32_t Read(const Stmt& s, int i) { return static_cast<uint32_t>(s.Int(i)); }
};
template <>
struct SqlValue<bool> {  // 0 or 1
  static void Bind(Stmt& st, int i, bool v) { st.Bind(i, int64_t{v ? 1 : 0}); }
  static bool Read(const Stmt& s, int i) { return s.Int(i) != 0; }
};
template <class T>
struct SqlValue<std::optional<T>> {  // unset is NULL
  static void Bind(Stmt& st, int i, const std::optional<T>& v) {
    if (v)
      SqlValue<T>::Bind(st, i, *v);
    else
      st.BindNull(i);
  }
  static std::optional<T> Read(const Stmt& s, int i) {
    return s.IsNull(i) ? std::nullopt : std::optional<T>(SqlValue<T>::Read(s, i));
  }
};
template <>
struct SqlValue<std::vector<int>> {  // GPU indexes as text
  static void Bind(Stmt& st, int i, const std::vector<int>& v) { st.Bind(i, JoinInts(v)); }
  static std::vector<int> Read(const Stmt& s, int i) { return ParseGpus(s.Text(i)); }
};
template <NamedEnum E>
struct SqlValue<E> {  // its name; a name the table does not know reads as E{}
  static void Bind(Stmt& st, int i, E v) { st.Bind(i, EnumNamesOf(v).Name(v)); }
  static E Read(const Stmt& s, int i) { return EnumNamesOf(E{}).Parse(s.Text(i)).value_or(E{}); }
};
// A string stored as NULL when empty (NULL reads back as "").
struct EmptyAsNull {
  static void Bind(Stmt& st, int i, const std::string& v) {
    if (v.empty())
      st.BindNull(i);
    else
      st.Bind(i, v);
  }
  static std::string Read(const Stmt& s, int i) { return s.Text(i); }
};

// How an upsert merges a column into the row already there (rollups add up).
enum class Merge { kReplace, kSum, kMax };

template <class P>
struct MemberOf;
template <class R, class T>
struct MemberOf<T R::*> {
  using Record = R;
  using Type = T;
};

// A field kept in the member M, converted by Sql. `json` is the key in the
// record's JSON form, empty when it is the column's name.
template <auto M, class Sql = SqlValue<typename MemberOf<decltype(M)>::Type>>
struct Field {
  using Record = typename MemberOf<decltype(M)>::Record;
  using Type = typename MemberOf<decltype(M)>::Type;
  static constexpr auto kMember = M;
  std::string_view column;
  std::string_view decl;  // type and constraints, as in CREATE TABLE
  std::string_view json = {};
  Merge merge = Merge::kReplace;

  std::string_view JsonKey() const { return json.empty() ? column : json; }
  void Bind(Stmt& st, int i, const Record& r) const { Sql::Bind(st, i, r.*M); }
  void Read(const Stmt& s, int i, Record& r) const { r.*M = Sql::Read(s, i); }
};

// A column whose value is not one member as it is: Codec converts between the
// record R and the column (static Bind(Stmt&, int, const R&), Read(const Stmt&, int, R&)).
template <class R, class Codec>
struct Column {
  using Record = R;
  std::string_view column;
  std::string_view decl;

  void Bind(Stmt& st, int i, const R& r) const { Codec::Bind(st, i, r); }
  void Read(const Stmt& s, int i, R& r) const { Codec::Read(s, i, r); }
};

struct TableInfo {
  std::string_view name;
  std::string_view primary_key = {};  // a composite key's columns ("uid, op_id"), else empty
  std::string_view options = "STRICT";
};

template <class... F>
struct Table {
  using Record = typename std::tuple_element_t<0, std::tuple<F...>>::Record;
  TableInfo info;
  std::tuple<F...> fields;
};

template <class... F>
constexpr Table<F...> MakeTable(TableInfo info, F... fields) {
  return {info, {fields...}};
}

// Calls f(field) for each field in column order.
template <class T, class Fn>
void ForEachField(const T& table, Fn&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, table.fields);
}

// SQLite assigns an AUTOINCREMENT column: it is read, never written.
constexpr bool Generated(std::string_view decl) { return decl.find("AUTOINCREMENT") != decl.npos; }

// "a, b, c": every column, each after `prefix` (a join's table alias "j.").
template <class T>
std::string ColumnList(const T& table, std::string_view prefix = {}) {
  std::string out;
  ForEachField(table, [&](const auto& f) {
    if (!out.empty()) out += ", ";
    out.append(prefix).append(f.column);
  });
  return out;
}

// "SELECT a, b, c FROM name": every column of the table.
template <class T>
std::string SelectSql(const T& table) {
  return "SELECT " + ColumnList(table) + " FROM " + std::string(table.info.name);
}

// "CREATE TABLE name(\n  col decl,\n  ...\n) STRICT;\n"; `head` may add IF NOT EXISTS.
template <class T>
std::string CreateTableSql(const T& table, std::string_view head = "CREATE TABLE") {
  std::string out = std::string(head) + " " + std::string(table.info.name) + "(\n";
  std::string sep;
  ForEachField(table, [&](const auto& f) {
    out.append(sep).append("  ").append(f.column).append(" ").append(f.decl);
    sep = ",\n";
  });
  if (!table.info.primary_key.empty())
    out.append(sep).append("  PRIMARY KEY (").append(table.info.primary_key).append(")");
  return out.append("\n) ").append(table.info.options).append(";\n");
}

// "INSERT INTO name(cols) VALUES(?1,...)" over the written columns, numbered as BindRow binds them.
template <class T>
std::string InsertSql(const T& table, std::string_view verb = "INSERT") {
  std::string cols, values;
  int n = 0;
  ForEachField(table, [&](const auto& f) {
    if (Generated(f.decl)) return;
    if (n++) cols += ", ", values += ",";
    cols.append(f.column);
    values += "?" + std::to_string(n);
  });
  return std::string(verb) + " INTO " + std::string(table.info.name) + "(" + cols + ") VALUES(" + values +
         ")";
}

// "UPDATE name SET col=?N, ... WHERE first=?1": the whole row, found by its first written column.
template <class T>
std::string UpdateSql(const T& table) {
  std::string sets;
  std::string_view key;
  int n = 0;
  ForEachField(table, [&](const auto& f) {
    if (Generated(f.decl)) return;
    if (n++ == 0) key = f.column;
    if (n > 1) sets += ", ";
    sets.append(f.column).append("=?").append(std::to_string(n));
  });
  return "UPDATE " + std::string(table.info.name) + " SET " + sets + " WHERE " + std::string(key) + "=?1";
}

// InsertSql followed by "ON CONFLICT(primary key) DO UPDATE SET" each other column by its Merge.
template <class T>
std::string UpsertSql(const T& table) {
  std::string sets;
  const std::string key = ", " + std::string(table.info.primary_key) + ",";
  ForEachField(table, [&](const auto& f) {
    if (Generated(f.decl) || key.find(", " + std::string(f.column) + ",") != key.npos) return;
    const std::string c(f.column);
    if (!sets.empty()) sets += ", ";
    switch (f.merge) {
      case Merge::kReplace: sets += c + "=excluded." + c; break;
      case Merge::kSum: sets += c + "=" + c + "+excluded." + c; break;
      case Merge::kMax: sets += c + "=max(" + c + ", excluded." + c + ")"; break;
    }
  });
  return InsertSql(table) + " ON CONFLICT(" + std::string(table.info.primary_key) + ") DO UPDATE SET " + sets;
}

// Binds the written columns of `r` as ?1, ?2, ... in column order.
template <class T>
void BindRow(Stmt& st, const T& table, const typename T::Record& r) {
  int i = 1;
  ForEachField(table, [&](const auto& f) {
    if (!Generated(f.decl)) f.Bind(st, i++, r);
  });
}

// The record in the current row of a statement that selected ColumnList(table).
template <class T>
typename T::Record ReadRow(const Stmt& s, const T& table) {
  typename T::Record r;
  int i = 0;
  ForEachField(table, [&](const auto& f) { f.Read(s, i++, r); });
  return r;
}

// Runs `sql`, an insert or update of a whole row (InsertSql, UpdateSql), with r's columns bound.
template <class T>
Status WriteRow(Db& db, const std::string& sql, const T& table, const typename T::Record& r) {
  BK_ASSIGN_OR_RETURN(Stmt st, db.Cached(sql));
  BindRow(st, table, r);
  return st.Run();
}

// The record in the first row of `st`, if there is one.
template <class T>
Result<std::optional<typename T::Record>> ReadFirstRow(Stmt& st, const T& table) {
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<typename T::Record>();
  return std::optional(ReadRow(st, table));
}

// Every remaining row of `st`, each read with `read(st)`.
template <class F>
auto ReadAll(Stmt& st, F read) -> Result<std::vector<decltype(read(st))>> {
  std::vector<decltype(read(st))> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(read(st));
  }
  return out;
}

// Every remaining row of `st` as records of `table`.
template <class T>
Result<std::vector<typename T::Record>> ReadRows(Stmt& st, const T& table) {
  return ReadAll(st, [&](const Stmt& s) { return ReadRow(s, table); });
}

}  // namespace bk::store
