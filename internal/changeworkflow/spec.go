// Package changeworkflow holds the rules of ChangeWorkflows: promotion recipes in a Space. A workflow's
// content (its Spec) is ordered Stages, each selecting Spaces (WhereSpace) and naming the gates
// (Prerequisites) that must hold before a change enters it, optional Final gates, and CustomPrerequisites:
// gates written in CEL (the Common Expression Language) over the Space, Unit, Revision, ChangeOrder,
// Attestations and Releases a promotion looks at. A ChangeOrder copies a workflow's Spec when it is made,
// so later edits of the workflow do not change orders already under way.
package changeworkflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
)

// Spec is a workflow's content; it is also copied onto ChangeOrders (ChangeOrder.ChangeWorkflow).
type Spec struct {
	Stages              []Stage        `json:"Stages"`
	Final               *FinalStage    `json:"Final"`
	CustomPrerequisites []Prerequisite `json:"CustomPrerequisites"`
}

// Stage is one promotion stage: the Spaces it covers (WhereSpace, a where expression over Spaces; empty
// selects none by itself) and the gates that must hold before a change enters it.
type Stage struct {
	Name          string   `json:"Name"`
	WhereSpace    string   `json:"WhereSpace"`
	Prerequisites []string `json:"Prerequisites"`
}

// FinalStage is the gates checked after the last Stage.
type FinalStage struct {
	Prerequisites []string `json:"Prerequisites"`
}

// Prerequisite is a gate of the workflow's own: Expression is "cel:" followed by a CEL expression that
// evaluates to a bool over the variables described at Vars.
type Prerequisite struct {
	Name        string `json:"Name"`
	Expression  string `json:"Expression"`
	Description string `json:"Description"`
}

// The built-in gates: a Stage or Final names them without declaring them. The promotion engine decides
// what each means.
const (
	Promoted  = "Promoted"
	Validated = "Validated"
	Released  = "Released"
	Healthy   = "Healthy"
	Approved  = "Approved"
)

// BuiltIns are the built-in gate names, in their documented order.
var BuiltIns = []string{Promoted, Validated, Released, Healthy, Approved}

// Limits of a Spec (the document states them too).
const (
	MaxStages              = 20
	MaxNameLength          = 64
	MaxCustomPrerequisites = 50
	MaxExpressionLength    = 4096
	// MaxPrerequisites bounds the gates one Stage (or Final) names.
	MaxPrerequisites = 70
	// MaxWhereSpaceLength bounds a Stage's WhereSpace, MaxDescriptionLength a CustomPrerequisite's Description.
	MaxWhereSpaceLength  = 4096
	MaxDescriptionLength = 1024
	// ExpressionPrefix starts every CustomPrerequisite Expression: the language it is written in.
	ExpressionPrefix = "cel:"
)

// Normalized gives a Spec its stored form: empty lists rather than null ones (Final stays null when unset).
func (s Spec) Normalized() Spec {
	if s.Stages == nil {
		s.Stages = []Stage{}
	}
	stages := make([]Stage, len(s.Stages))
	for i, st := range s.Stages {
		if st.Prerequisites == nil {
			st.Prerequisites = []string{}
		}
		stages[i] = st
	}
	s.Stages = stages
	if s.Final != nil {
		f := *s.Final
		if f.Prerequisites == nil {
			f.Prerequisites = []string{}
		}
		s.Final = &f
	}
	if s.CustomPrerequisites == nil {
		s.CustomPrerequisites = []Prerequisite{}
	}
	return s
}

func invalid(item, description, format string, args ...any) error {
	return apierr.Validation(fmt.Sprintf(format, args...), apierr.Item{Item: item, Description: description})
}

// Validate checks a Spec on its own: 1 to 20 Stages with unique Names of 1 to 64 characters; each
// WhereSpace empty or a where expression over Spaces (at most 4096 characters); at most 70 gates named by
// a Stage or Final, each a built-in gate or the Name of a CustomPrerequisite; at most 50
// CustomPrerequisites with unique Names (1 to 64 characters, no built-in name), Descriptions of at most
// 1024 characters and Expressions of at most 4096 characters that start with "cel:" and compile to a
// bool. A problem is 400 Validation naming the field (e.g. "Stages[1].Prerequisites[0]").
func (s Spec) Validate() error {
	if len(s.Stages) == 0 || len(s.Stages) > MaxStages {
		return invalid("Stages", "1 to 20 Stages", "Stages: a ChangeWorkflow has 1 to %d Stages, not %d", MaxStages, len(s.Stages))
	}
	if len(s.CustomPrerequisites) > MaxCustomPrerequisites {
		return invalid("CustomPrerequisites", "at most 50", "CustomPrerequisites: a ChangeWorkflow has at most %d, not %d",
			MaxCustomPrerequisites, len(s.CustomPrerequisites))
	}
	custom := map[string]bool{}
	for i, p := range s.CustomPrerequisites {
		field := fmt.Sprintf("CustomPrerequisites[%d]", i)
		if err := checkName(field+".Name", p.Name); err != nil {
			return err
		}
		if slices.Contains(BuiltIns, p.Name) {
			return invalid(field+".Name", "a built-in gate", "%s.Name: %q is a built-in gate (%s); give your gate another Name",
				field, p.Name, strings.Join(BuiltIns, ", "))
		}
		if custom[p.Name] {
			return invalid(field+".Name", "declared twice", "%s.Name: %q is declared twice; each CustomPrerequisite has its own Name", field, p.Name)
		}
		custom[p.Name] = true
		if n := len([]rune(p.Description)); n > MaxDescriptionLength {
			return invalid(field+".Description", "too long", "%s.Description: at most %d characters, not %d", field, MaxDescriptionLength, n)
		}
		if _, err := compile(field+".Expression", p.Expression); err != nil {
			return err
		}
	}
	gates := func(field string, names []string) error {
		if len(names) > MaxPrerequisites {
			return invalid(field, "at most 70", "%s: a Stage names at most %d gates, not %d", field, MaxPrerequisites, len(names))
		}
		for j, n := range names {
			if !slices.Contains(BuiltIns, n) && !custom[n] {
				item := fmt.Sprintf("%s[%d]", field, j)
				return invalid(item, "unknown gate", "%s: %q is neither a built-in gate (%s) nor the Name of a CustomPrerequisite",
					item, n, strings.Join(BuiltIns, ", "))
			}
		}
		return nil
	}
	names := map[string]bool{}
	for i, st := range s.Stages {
		field := fmt.Sprintf("Stages[%d]", i)
		if err := checkName(field+".Name", st.Name); err != nil {
			return err
		}
		if names[st.Name] {
			return invalid(field+".Name", "duplicate Stage", "%s.Name: Stage %q appears twice; Stage Names are unique", field, st.Name)
		}
		names[st.Name] = true
		if n := len(st.WhereSpace); n > MaxWhereSpaceLength {
			return invalid(field+".WhereSpace", "too long", "%s.WhereSpace: at most %d characters, not %d", field, MaxWhereSpaceLength, n)
		}
		if err := listquery.CheckWhere(space.ListEntity, field+".WhereSpace", st.WhereSpace); err != nil {
			return err
		}
		if err := gates(field+".Prerequisites", st.Prerequisites); err != nil {
			return err
		}
	}
	if s.Final != nil {
		if err := gates("Final.Prerequisites", s.Final.Prerequisites); err != nil {
			return err
		}
	}
	return nil
}

func checkName(field, name string) error {
	if n := len([]rune(name)); n == 0 || n > MaxNameLength {
		return invalid(field, "1 to 64 characters", "%s: a Name has 1 to %d characters, not %d", field, MaxNameLength, n)
	}
	return nil
}

// Vars are what a CustomPrerequisite's expression reads. Each map becomes a CEL map from string keys to
// dynamic values, each list a list of such maps; a nil map or list is empty. Keys by variable (the
// promotion engine fills them; the document and docs/architecture.md list them too):
//
//	space        {SpaceID, Slug, Labels, Annotations, ComponentID}
//	unit         {UnitID, Slug, Labels, Annotations, HeadRevisionNum, UpstreamUnitID}
//	revision     {RevisionID, RevisionNum, DataHash, Description, UserID, ChangeSetID,
//	              ValidationPassed (bool), ValidationErrors (list of strings)}
//	attestations [{Type, Result, UserID, CreatedAt}]
//	releases     [{ReleaseID, ReleaseNum, Published (bool), Digest}]
//	changeOrder  {ChangeOrderID, Slug, Labels, Parameters}
//
// Values may be Go strings, bools, integers, floats, maps and slices of those, UUIDs (as strings), times
// (RFC 3339 strings) or nil; anything else is read through its JSON form.
type Vars struct {
	Space, Unit, Revision, ChangeOrder map[string]any
	Attestations, Releases             []map[string]any
}

// The CEL variable names.
const (
	VarSpace        = "space"
	VarUnit         = "unit"
	VarRevision     = "revision"
	VarAttestations = "attestations"
	VarReleases     = "releases"
	VarChangeOrder  = "changeOrder"
)

// Evaluation bounds: CostLimit is CEL's abstract cost (about one unit per operation and per element a
// comprehension visits); EvalTimeout interrupts what the cost does not catch.
const (
	CostLimit   = 100_000
	EvalTimeout = 100 * time.Millisecond
)

var celEnv = func() *cel.Env {
	obj := cel.MapType(cel.StringType, cel.DynType)
	list := cel.ListType(obj)
	env, err := cel.NewEnv(
		cel.Variable(VarSpace, obj), cel.Variable(VarUnit, obj), cel.Variable(VarRevision, obj),
		cel.Variable(VarChangeOrder, obj), cel.Variable(VarAttestations, list), cel.Variable(VarReleases, list),
	)
	if err != nil {
		panic(fmt.Sprintf("changeworkflow: building the CEL environment: %v", err))
	}
	return env
}()

// Program is a compiled CustomPrerequisite expression, safe for concurrent use.
type Program struct {
	source string
	prg    cel.Program
}

// Source is the expression the Program was compiled from, with its "cel:" prefix.
func (p Program) Source() string { return p.source }

// CompileExpression compiles a CustomPrerequisite Expression ("cel:" then CEL). It must type-check over
// the Vars and produce a bool (or a dynamic value, checked to be a bool when evaluated). A problem is 400
// Validation naming Expression.
func CompileExpression(expr string) (Program, error) {
	return compile("Expression", expr)
}

func compile(field, expr string) (Program, error) {
	if len(expr) > MaxExpressionLength {
		return Program{}, invalid(field, "too long", "%s: an Expression has at most %d characters, not %d", field, MaxExpressionLength, len(expr))
	}
	body, ok := strings.CutPrefix(expr, ExpressionPrefix)
	if !ok {
		return Program{}, invalid(field, `must start with "cel:"`, `%s: an Expression starts with "cel:" followed by a CEL expression, e.g. "cel:revision.ValidationPassed"`, field)
	}
	if strings.TrimSpace(body) == "" {
		return Program{}, invalid(field, "empty", `%s: the CEL expression after "cel:" is empty`, field)
	}
	ast, iss := celEnv.Compile(body)
	if iss.Err() != nil {
		msg := strings.ReplaceAll(iss.Err().Error(), "\n", " ")
		return Program{}, invalid(field, "does not compile", "%s: %s", field, msg)
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return Program{}, invalid(field, "not a bool", "%s: the expression gives %s; a gate's expression gives a bool", field, t.String())
	}
	prg, err := celEnv.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return Program{}, invalid(field, "does not compile", "%s: %v", field, err)
	}
	return Program{source: expr, prg: prg}, nil
}

// ErrNotCompiled is Eval's error on a zero Program.
var ErrNotCompiled = errors.New("the gate's expression is not compiled")

// Eval runs the Program over v. A runtime error (a missing key, a wrong type, the cost limit or the
// timeout) or a result that is not a bool is an error whose message says so; the promotion engine reports
// it as an unsatisfied gate.
func (p Program) Eval(v Vars) (bool, error) {
	return p.EvalContext(context.Background(), v)
}

// EvalContext is Eval that also stops when ctx ends (the caller's request or deadline).
func (p Program) EvalContext(ctx context.Context, v Vars) (bool, error) {
	if p.prg == nil {
		return false, ErrNotCompiled
	}
	ctx, cancel := context.WithTimeout(ctx, EvalTimeout)
	defer cancel()
	out, _, err := p.prg.ContextEval(ctx, map[string]any{
		VarSpace: object(v.Space), VarUnit: object(v.Unit), VarRevision: object(v.Revision),
		VarChangeOrder: object(v.ChangeOrder), VarAttestations: objects(v.Attestations), VarReleases: objects(v.Releases),
	})
	if err != nil {
		return false, fmt.Errorf("evaluating %s: %w", p.source, err)
	}
	b, ok := out.Value().(bool)
	if !ok || out.Type() != types.BoolType {
		return false, fmt.Errorf("evaluating %s: the result is %s (%v), not a bool", p.source, out.Type().TypeName(), out.Value())
	}
	return b, nil
}

func object(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = plain(v)
	}
	return out
}

func objects(l []map[string]any) []any {
	out := make([]any, len(l))
	for i, m := range l {
		out[i] = object(m)
	}
	return out
}

// plain turns v into values CEL takes as they are: strings, bools, int64s, float64s, lists, string-keyed
// maps and nil.
func plain(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int64, float64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return float64(x)
	case uuid.UUID:
		return x.String()
	case *uuid.UUID:
		if x == nil {
			return nil
		}
		return x.String()
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case *time.Time:
		if x == nil {
			return nil
		}
		return x.UTC().Format(time.RFC3339Nano)
	case *string:
		if x == nil {
			return nil
		}
		return *x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out
	case map[string]any:
		return object(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case []map[string]any:
		return objects(x)
	}
	// Anything else is read through its JSON form (numbers that are whole become int64).
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var j any
	if err := dec.Decode(&j); err != nil {
		return string(b)
	}
	return fromJSON(j)
}

func fromJSON(j any) any {
	switch x := j.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fromJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	}
	return j
}
