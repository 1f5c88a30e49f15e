package function

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hubd/hubd/internal/apierr"
)

// A stored Invocation is a template: it declares Parameters, and the string Values of its Arguments and
// its WhereResource refer to them as {{.Name}} (spaces allowed inside the braces). Running it fills the
// values in: an argument whose whole Value is one reference takes the parameter's value with its type; a
// reference within longer text takes the value's text. An optional parameter not given removes a named
// argument that is only its reference (the function's own default applies) and is empty text elsewhere.

// MaxParameters bounds the Parameters of a stored Invocation.
const MaxParameters = 50

// Bounds of templates, set once at start (hubd serve's flags) and read by every request.
var (
	// MaxTemplateReferences bounds the parameter references ({{.Name}}) of a stored Invocation, all its
	// invocations together.
	MaxTemplateReferences = 1000
	// MaxExpandedBytes bounds the text a request's (or a data write's) templates expand to, all of them
	// together: expansion stops when it is reached, so no value repeated by many references can make more.
	MaxExpandedBytes = 1 << 20
)

// Budget is what is left of MaxExpandedBytes for the expansions of one request or data write.
type Budget struct{ left int }

// NewBudget is a full budget.
func NewBudget() *Budget { return &Budget{left: MaxExpandedBytes} }

// take spends n bytes of the budget, reporting whether they were left.
func (b *Budget) take(n int) bool {
	if n > b.left {
		b.left = 0
		return false
	}
	b.left -= n
	return true
}

// errExpansion is the refusal of values whose expansion would pass MaxExpandedBytes.
func errExpansion(field string) error {
	return apierr.Validation(fmt.Sprintf("%s: with these values the templates expand to more than %d bytes, the bound (--max-template-expansion)", field, MaxExpandedBytes),
		apierr.Item{Item: field, Description: fmt.Sprintf("expands to more than %d bytes", MaxExpandedBytes)})
}

var (
	placeholder       = regexp.MustCompile(`\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
	wholePlaceholder  = regexp.MustCompile(`^\s*\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$`)
	parameterNameRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// CheckParameters checks a template's declared Parameters on their own: each has a unique name of
// letters, digits and underscores (not starting with a digit, at most 64), a DataType of string, int or
// bool (string when empty), a Regexp that compiles, Min and Max only for int and in order, and
// EnumValues and an Example its own checks accept. It returns them with DataType filled in.
func CheckParameters(params []Parameter) ([]Parameter, error) {
	if len(params) > MaxParameters {
		return nil, apierr.Validation(fmt.Sprintf("Parameters holds more than %d parameters", MaxParameters), apierr.Item{Item: "Parameters", Description: "too many"})
	}
	out := make([]Parameter, len(params))
	seen := map[string]bool{}
	for i, p := range params {
		at := fmt.Sprintf("Parameters.%d", i)
		bad := func(item, msg string) error {
			return apierr.Validation(fmt.Sprintf("%s.%s: %s", at, item, msg), apierr.Item{Item: at + "." + item, Description: msg})
		}
		if !parameterNameRule.MatchString(p.ParameterName) {
			return nil, bad("ParameterName", fmt.Sprintf("%q must be 1 to 64 letters, digits and underscores, not starting with a digit", p.ParameterName))
		}
		if seen[p.ParameterName] {
			return nil, bad("ParameterName", fmt.Sprintf("%s is declared twice", p.ParameterName))
		}
		seen[p.ParameterName] = true
		if p.DataType == "" {
			p.DataType = TypeString
		}
		switch p.DataType {
		case TypeString, TypeInt, TypeBool:
		default:
			return nil, bad("DataType", fmt.Sprintf("%q is not string, int or bool", p.DataType))
		}
		if p.Regexp != "" {
			if _, err := regexp.Compile(p.Regexp); err != nil {
				return nil, bad("Regexp", "does not compile: "+err.Error())
			}
		}
		if (p.Min != nil || p.Max != nil) && p.DataType != TypeInt {
			return nil, bad("DataType", "Min and Max bound int parameters only")
		}
		if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
			return nil, bad("Min", fmt.Sprintf("%d is more than Max %d", *p.Min, *p.Max))
		}
		for j, e := range p.EnumValues {
			if _, err := convert(e, Parameter{DataType: p.DataType}); err != nil {
				return nil, bad(fmt.Sprintf("EnumValues.%d", j), err.Error())
			}
		}
		if p.Example != "" {
			if _, err := p.accept(p.Example); err != nil {
				return nil, bad("Example", err.Error())
			}
		}
		if p.EnumValues == nil {
			p.EnumValues = []string{}
		}
		out[i] = p
	}
	return out, nil
}

// CheckTemplate checks a template's invocations for a ToolchainType against its (checked) Parameters:
// each function exists, each reference names a declared parameter, and a whole-Value reference to an
// optional parameter is a named argument (removing a positional one would shift the others). An
// invocation whose references all have an Example is bound with the Examples, so its arguments are
// checked now; the others are bound with the values each run gives.
func CheckTemplate(toolchain string, invs []Invocation, params []Parameter) error {
	declared := map[string]Parameter{}
	examples := map[string]any{}
	for _, p := range params {
		declared[p.ParameterName] = p
		if p.Example != "" {
			examples[p.ParameterName] = p.Example
		}
	}
	refs := 0
	for i, inv := range invs {
		field := fmt.Sprintf("FunctionInvocations.%d", i)
		if _, ok := Lookup(toolchain, inv.FunctionName); !ok {
			return apierr.Validation(fmt.Sprintf("%s.FunctionName: there is no function %q for %s; GET /function lists them", field, inv.FunctionName, toolchain),
				apierr.Item{Item: field + ".FunctionName", Description: "unknown function"})
		}
		bindable := true
		check := func(at, text string) error {
			// Counting first keeps a template of very many references from being matched in full.
			if refs += strings.Count(text, "{{"); refs > MaxTemplateReferences {
				return apierr.Validation(fmt.Sprintf("%s: the Invocation refers to parameters more than %d times, the bound (--max-template-references)", at, MaxTemplateReferences),
					apierr.Item{Item: at, Description: fmt.Sprintf("more than %d parameter references", MaxTemplateReferences)})
			}
			for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
				if _, ok := declared[m[1]]; !ok {
					return apierr.Validation(fmt.Sprintf("%s refers to {{.%s}}, which Parameters does not declare", at, m[1]),
						apierr.Item{Item: at, Description: "undeclared parameter " + m[1]})
				}
				if _, ok := examples[m[1]]; !ok {
					bindable = false
				}
			}
			return nil
		}
		if err := check(field+".WhereResource", inv.WhereResource); err != nil {
			return err
		}
		for j, a := range inv.Arguments {
			at := fmt.Sprintf("%s.Arguments.%d.Value", field, j)
			text, ok := a.Value.(string)
			if !ok {
				continue
			}
			if err := check(at, text); err != nil {
				return err
			}
			if m := wholePlaceholder.FindStringSubmatch(text); m != nil && !declared[m[1]].Required && a.ParameterName == "" {
				return apierr.Validation(fmt.Sprintf("%s is only {{.%s}}, an optional parameter: name the argument (ParameterName) so it can be left out", at, m[1]),
					apierr.Item{Item: at, Description: "optional parameter in a positional argument"})
			}
		}
		if bindable {
			filled, ok := expandOne(inv, declared, examples, NewBudget())
			if !ok {
				return errExpansion("Parameters")
			}
			if _, err := Bind(toolchain, filled, field); err != nil {
				return err
			}
		}
	}
	return nil
}

// Expand fills a template's invocations with parameter values, spending budget on the text it makes.
// field names the values in errors (Parameters, Params): a name not declared, a required one missing or
// values expanding past the budget are 400 Validation, a value its parameter does not accept 422
// Unprocessable.
func Expand(invs []Invocation, params []Parameter, values map[string]any, field string, budget *Budget) ([]Invocation, error) {
	declared := map[string]Parameter{}
	for _, p := range params {
		declared[p.ParameterName] = p
	}
	typed := map[string]any{}
	for name, v := range values {
		p, ok := declared[name]
		if !ok {
			return nil, apierr.Validation(fmt.Sprintf("%s.%s: the Invocation declares no parameter %s", field, name, name),
				apierr.Item{Item: field + "." + name, Description: "undeclared parameter"})
		}
		out, err := p.accept(v)
		if err != nil {
			return nil, apierr.Unprocessable("%s.%s: %s", field, name, err.Error()).WithDetail("%s.%s", field, name)
		}
		typed[name] = out
	}
	for _, p := range params {
		if _, ok := typed[p.ParameterName]; !ok && p.Required {
			return nil, apierr.Validation(fmt.Sprintf("%s: the Invocation needs parameter %s (%s)", field, p.ParameterName, p.DataType),
				apierr.Item{Item: field, Description: "missing " + p.ParameterName})
		}
	}
	out := make([]Invocation, len(invs))
	for i, inv := range invs {
		var ok bool
		if out[i], ok = expandOne(inv, declared, typed, budget); !ok {
			return nil, errExpansion(field)
		}
	}
	return out, nil
}

// expandOne fills one invocation's references with values (those given; the others are optional),
// spending budget on every text it makes; false when the budget ran out (the invocation is then partial).
func expandOne(inv Invocation, declared map[string]Parameter, values map[string]any, budget *Budget) (Invocation, bool) {
	within := true
	texts := map[string]string{} // each value's text, made once
	text := func(s string) string {
		if !within || !strings.Contains(s, "{{") {
			return s
		}
		var b strings.Builder
		last := 0
		// One reference at a time, so the work stops where the budget does.
		for within {
			m := placeholder.FindStringSubmatchIndex(s[last:])
			if m == nil {
				within = budget.take(len(s) - last)
				b.WriteString(s[last:])
				break
			}
			name := s[last+m[2] : last+m[3]]
			v, ok := texts[name]
			if x, given := values[name]; !ok && given {
				v = fmt.Sprint(x)
				texts[name] = v
			}
			if within = budget.take(m[0] + len(v)); within {
				b.WriteString(s[last : last+m[0]])
				b.WriteString(v)
				last += m[1]
			}
		}
		return b.String()
	}
	out := inv
	out.WhereResource = text(inv.WhereResource)
	out.Arguments = make([]Argument, 0, len(inv.Arguments))
	for _, a := range inv.Arguments {
		s, ok := a.Value.(string)
		if !ok || !strings.Contains(s, "{{") {
			out.Arguments = append(out.Arguments, a)
			continue
		}
		if m := wholePlaceholder.FindStringSubmatch(s); m != nil {
			v, given := values[m[1]]
			if !given {
				if _, known := declared[m[1]]; known && a.ParameterName != "" {
					continue // an optional parameter left out: so is its argument
				}
				v = ""
			}
			if within = within && budget.take(len(fmt.Sprint(v))); !within {
				break
			}
			out.Arguments = append(out.Arguments, Argument{ParameterName: a.ParameterName, Value: v})
			continue
		}
		out.Arguments = append(out.Arguments, Argument{ParameterName: a.ParameterName, Value: text(s)})
	}
	return out, within
}
