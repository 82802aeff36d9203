package store

import (
	"context"
	"database/sql"
	"reflect"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// selectCharged is sqlx.SelectContext that, when ctx carries a read budget
// (domain.WithReadBudget: a GraphQL request's), charges each row's text and
// binary bytes as it is scanned and stops at the first row past the budget:
// one statement never holds more than the budget in memory, however many
// rows or aliases a request batches into it.
func selectCharged(ctx context.Context, ext sqlx.QueryerContext, dest any, query string, args ...any) error {
	budget := domain.ReadBudgetOf(ctx)
	if budget == nil {
		return sqlx.SelectContext(ctx, ext, dest, query, args...)
	}
	rows, err := ext.QueryxContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	slice := reflect.ValueOf(dest).Elem()
	elem := slice.Type().Elem()
	base, isPtr := elem, elem.Kind() == reflect.Pointer
	if isPtr {
		base = elem.Elem()
	}
	structScan := base.Kind() == reflect.Struct && !reflect.PointerTo(base).Implements(scannerType)
	var plan *scanPlan
	sizer := sizerOf(base)
	for rows.Next() {
		v := reflect.New(base)
		if structScan && plan == nil {
			if plan, err = planScan(rows, base); err != nil {
				return err
			}
		}
		if structScan && plan.direct {
			err = plan.scan(rows, v.Elem())
		} else if structScan {
			err = rows.StructScan(v.Interface())
		} else {
			err = rows.Scan(v.Interface())
		}
		if err != nil {
			return err
		}
		if err := budget.Charge(sizer.size(v.Elem())); err != nil {
			return err
		}
		if isPtr {
			slice.Set(reflect.Append(slice, v))
		} else {
			slice.Set(reflect.Append(slice, v.Elem()))
		}
	}
	return rows.Err()
}

// getCharged is sqlx.GetContext charging the row to ctx's read budget.
func getCharged(ctx context.Context, ext sqlx.QueryerContext, dest any, query string, args ...any) error {
	if err := sqlx.GetContext(ctx, ext, dest, query, args...); err != nil {
		return err
	}
	return domain.ChargeRead(ctx, sizeOf(reflect.ValueOf(dest).Elem()))
}

var scannerType = reflect.TypeFor[sql.Scanner]()

// scanPlan is how one statement's rows are scanned into a struct: the field
// of each column (sqlx's mapping, the db tags).
type scanPlan struct {
	fields [][]int // per column, the field's index path (sqlx's traversal)
	values []any   // per column, where Scan writes it: reused row after row
	// direct: every column has a field, reached through structs only and
	// not a map, so the row is scanned straight into the fields' addresses.
	// sqlx's StructScan would also allocate a value for every nil pointer
	// field of every row (then set it back to nil for a NULL); a pointer
	// field is scanned through its address alone, as database/sql allocates
	// a value for a non-NULL column itself. Otherwise rows go through
	// StructScan.
	direct bool
}

func planScan(rows *sqlx.Rows, t reflect.Type) (*scanPlan, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	p := &scanPlan{fields: rows.Mapper.TraversalsByName(t, cols), values: make([]any, len(cols)), direct: true}
	for _, path := range p.fields {
		if !directPath(t, path) {
			p.direct = false
		}
	}
	return p, nil
}

// directPath reports whether the field at path in struct type t is reached
// through struct fields only, and is not a map.
func directPath(t reflect.Type, path []int) bool {
	if len(path) == 0 {
		return false // a column without a field: StructScan's error
	}
	for n, i := range path {
		f := t.Field(i)
		t = f.Type
		if n < len(path)-1 && t.Kind() != reflect.Struct {
			return false
		}
	}
	return t.Kind() != reflect.Map
}

// scan scans the current row into the fields of struct e.
func (p *scanPlan) scan(rows *sqlx.Rows, e reflect.Value) error {
	for i, path := range p.fields {
		p.values[i] = e.FieldByIndex(path).Addr().Interface()
	}
	if err := rows.Scan(p.values...); err != nil {
		return err
	}
	return rows.Err()
}

// rowSize is a fixed charge per value that is not text or bytes.
const rowSize = 8

// sizeOf approximates the bytes v holds: its strings' and byte slices'
// lengths, and a word for everything else.
func sizeOf(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return len(v.String())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return len(v.Bytes())
		}
		n := 0
		for i := range v.Len() {
			n += sizeOf(v.Index(i))
		}
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return rowSize
		}
		return sizeOf(v.Elem())
	case reflect.Struct:
		return sizerOf(v.Type()).size(v)
	}
	return rowSize
}

// rowSizer is sizeOf for values of one type, worked out once per type: a
// struct's text fields and their kinds are known before its rows are
// scanned, so a row costs no lookup of its type.
type rowSizer struct {
	strct  bool
	fixed  int          // a struct's word per field
	fields []sizedField // a struct's fields that can hold text or bytes
}

type sizedField struct {
	i    int
	text bool // a string or a byte slice: its length
}

// sizers caches a rowSizer per type.
var sizers sync.Map // reflect.Type -> *rowSizer

// sizerOf is the rowSizer of t.
func sizerOf(t reflect.Type) *rowSizer {
	if s, ok := sizers.Load(t); ok {
		return s.(*rowSizer)
	}
	s := &rowSizer{strct: t.Kind() == reflect.Struct}
	if s.strct {
		s.fixed = rowSize * t.NumField()
		for _, i := range textFields(t) {
			ft := t.Field(i).Type
			text := ft.Kind() == reflect.String || (ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8)
			s.fields = append(s.fields, sizedField{i: i, text: text})
		}
	}
	actual, _ := sizers.LoadOrStore(t, s)
	return actual.(*rowSizer)
}

// size is sizeOf(v) for v of the sizer's type.
func (s *rowSizer) size(v reflect.Value) int {
	if !s.strct {
		return sizeOf(v)
	}
	n := s.fixed
	for _, f := range s.fields {
		if f.text {
			n += v.Field(f.i).Len()
		} else {
			n += sizeOf(v.Field(f.i))
		}
	}
	return n
}

// textFields lists t's exported fields that can hold text or bytes
// (strings, byte slices, slices, pointers and nested structs).
func textFields(t reflect.Type) []int {
	var out []int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Slice, reflect.Pointer, reflect.Struct:
			out = append(out, i)
		}
	}
	return out
}
