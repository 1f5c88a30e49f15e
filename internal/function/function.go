// Package function holds the functions hubd runs over configuration data: their signatures (the
// registry clients read to show and check calls), the binding of a call's arguments to parameters, and
// the builtin executor that runs them. Functions are pure over the data they are given: they read it
// and, when Mutating, change it; recording the change (a Revision and Mutation per Unit) is the unit
// package's.
package function

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/listquery"
)

// Parameter data types.
const (
	TypeString = "string"
	TypeInt    = "int"
	TypeBool   = "bool"
	// TypeAny keeps the argument's JSON type (a string, integer or boolean): set-value writes 3 and "3"
	// differently.
	TypeAny = "any"
)

// Parameter is one parameter of a function.
type Parameter struct {
	ParameterName string
	Description   string
	DataType      string
	Required      bool
	Example       string
	EnumValues    []string
	// Regexp, Min and Max further bound a value: a pattern its text matches, and an integer's range.
	Regexp   string
	Min, Max *int64
	// isPath: the value is a path (ParsePath), checked when the call is bound.
	isPath bool
}

// Output describes what a function returns.
type Output struct {
	ResultName  string
	Description string
	OutputType  string
}

// Output types.
const (
	OutputValues     = "Values"     // a list of {ResourceType, ResourceName, Path, Value}
	OutputPaths      = "Paths"      // a list of {ResourceType, ResourceName, Path}
	OutputResources  = "Resources"  // a list of {ResourceType, ResourceName}
	OutputValidation = "Validation" // a ValidationResult {Passed, Details}
	OutputNone       = "None"       // mutating functions: the data is the result
)

// Signature describes a function to clients.
type Signature struct {
	FunctionName       string
	Description        string
	FunctionType       string
	ToolchainType      string
	AttributeName      string
	Parameters         []Parameter
	RequiredParameters int
	VarArgs            bool
	OutputInfo         Output
	Mutating           bool
	Validating         bool
	Hermetic           bool
	Idempotent         bool
	Replayable         bool
	OtherDataExpected  []string
}

// FunctionTypeBuiltin marks the functions hubd runs itself.
const FunctionTypeBuiltin = "Builtin"

// Argument is one argument of a call: by position (ParameterName empty) or by name.
type Argument struct {
	ParameterName string `json:"ParameterName,omitempty"`
	Value         any    `json:"Value"`
}

// Requirement is one entry of a Clearance.
type Requirement struct {
	Key      string   `json:"Key"`
	Operator string   `json:"Operator"`
	Values   []string `json:"Values"`
}

// Clearance operators.
const (
	OpExists       = "Exists"
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpDoesNotExist = "DoesNotExist"
)

// Invocation is one call: a function, its arguments, the resources it applies to, and the guards it
// stamps on (and clearance it holds for) the paths it writes.
type Invocation struct {
	FunctionName  string            `json:"FunctionName"`
	Arguments     []Argument        `json:"Arguments"`
	WhereResource string            `json:"WhereResource,omitempty"`
	Guards        map[string]string `json:"Guards,omitempty"`
	Clearance     []Requirement     `json:"Clearance,omitempty"`
}

// Function is a builtin function: its signature and what it does.
type Function struct {
	Signature
	run func(c *call) (any, error)
}

// registry holds the builtin functions per ToolchainType and name.
var registry = map[string]map[string]*Function{}

func register(f *Function, toolchains ...string) {
	for _, t := range toolchains {
		if registry[t] == nil {
			registry[t] = map[string]*Function{}
		}
		c := *f
		c.ToolchainType = t
		c.FunctionType = FunctionTypeBuiltin
		c.Hermetic = true // builtins read nothing but their data and arguments
		c.RequiredParameters = 0
		for _, p := range c.Parameters {
			if p.Required {
				c.RequiredParameters++
			}
		}
		registry[t][c.FunctionName] = &c
	}
}

// Lookup finds a builtin function of a ToolchainType.
func Lookup(toolchain, name string) (*Function, bool) {
	f, ok := registry[toolchain][name]
	return f, ok
}

// signatureAttributes are what where may test on the registry.
var signatureAttributes = map[string]listquery.Type{
	"FunctionName": listquery.String, "Description": listquery.String, "FunctionType": listquery.String,
	"ToolchainType": listquery.String, "AttributeName": listquery.String, "RequiredParameters": listquery.Int,
	"VarArgs": listquery.Bool, "Mutating": listquery.Bool, "Validating": listquery.Bool, "Hermetic": listquery.Bool,
	"Idempotent": listquery.Bool, "Replayable": listquery.Bool, "OutputType": listquery.String,
}

func (s Signature) attributes() listquery.Attributes {
	return listquery.Attributes{
		"FunctionName": s.FunctionName, "Description": s.Description, "FunctionType": s.FunctionType,
		"ToolchainType": s.ToolchainType, "AttributeName": s.AttributeName, "RequiredParameters": int64(s.RequiredParameters),
		"VarArgs": s.VarArgs, "Mutating": s.Mutating, "Validating": s.Validating, "Hermetic": s.Hermetic,
		"Idempotent": s.Idempotent, "Replayable": s.Replayable, "OutputType": s.OutputInfo.OutputType,
	}
}

// Signatures returns the builtin functions that where selects, per ToolchainType and name. A where that
// does not parse is 400 naming where.
func Signatures(where string) (map[string]map[string]Signature, error) {
	m, err := listquery.CompileMatcher(where, signatureAttributes)
	if err != nil {
		return nil, whereError("where", err)
	}
	out := map[string]map[string]Signature{}
	for _, t := range configdata.ToolchainTypes {
		out[t] = map[string]Signature{}
		for name, f := range registry[t] {
			if m.Match(f.attributes()) {
				out[t][name] = f.Signature
			}
		}
	}
	return out, nil
}

func whereError(field string, err error) error {
	if se, ok := err.(*listquery.SyntaxError); ok {
		return apierr.Validation(fmt.Sprintf("%s is not valid: %s", field, se.Error()), apierr.Item{Item: field, Description: se.Msg})
	}
	return err
}

// Call is an invocation checked against its function: arguments bound to parameters and converted.
type Call struct {
	Invocation
	Function *Function
	args     map[string]any
	varArgs  []any
	where    *listquery.Matcher
}

// resourceAttributes are what WhereResource may test.
var resourceAttributes = map[string]listquery.Type{
	"ResourceType": listquery.String, "ResourceName": listquery.String, "Kind": listquery.String,
	"APIVersion": listquery.String, "Name": listquery.String, "Namespace": listquery.String,
}

// Bind checks an invocation for a ToolchainType: the function exists, each argument names (or by
// position reaches) a parameter, every required parameter has an argument, and each value converts to
// its parameter's type. field names the invocation in errors (FunctionInvocations.0). A value that does
// not convert is 422 Unprocessable; anything else wrong is 400 Validation.
func Bind(toolchain string, inv Invocation, field string) (*Call, error) {
	f, ok := Lookup(toolchain, inv.FunctionName)
	if !ok {
		return nil, apierr.Validation(fmt.Sprintf("%s: there is no function %q for %s; GET /function lists them", join(field, "FunctionName"), inv.FunctionName, toolchain),
			apierr.Item{Item: join(field, "FunctionName"), Description: "unknown function"})
	}
	c := &Call{Invocation: inv, Function: f, args: map[string]any{}}
	where, err := listquery.CompileMatcher(inv.WhereResource, resourceAttributes)
	if err != nil {
		return nil, whereError(join(field, "WhereResource"), err)
	}
	c.where = where
	if err := CheckGuards(inv.Guards, inv.Clearance, field); err != nil {
		return nil, err
	}
	byName := map[string]Parameter{}
	for _, p := range f.Parameters {
		byName[p.ParameterName] = p
	}
	for i, a := range inv.Arguments {
		at := join(field, fmt.Sprintf("Arguments.%d", i))
		var p Parameter
		switch {
		case a.ParameterName != "":
			var ok bool
			if p, ok = byName[a.ParameterName]; !ok {
				return nil, apierr.Validation(fmt.Sprintf("%s: %s has no parameter %q", at, f.FunctionName, a.ParameterName),
					apierr.Item{Item: at + ".ParameterName", Description: "unknown parameter"})
			}
		case i < len(f.Parameters):
			p = f.Parameters[i]
		case f.VarArgs && len(f.Parameters) > 0:
			p = f.Parameters[len(f.Parameters)-1]
		default:
			return nil, apierr.Validation(fmt.Sprintf("%s: %s takes %d arguments", at, f.FunctionName, len(f.Parameters)),
				apierr.Item{Item: at, Description: "too many arguments"})
		}
		v, err := p.accept(a.Value)
		if err == nil && p.isPath {
			_, err = ParsePath(v.(string))
		}
		if err != nil {
			return nil, apierr.Unprocessable("%s (%s of %s): %s", at, p.ParameterName, f.FunctionName, err.Error()).
				WithDetail("%s", at)
		}
		isLast := f.VarArgs && len(f.Parameters) > 0 && p.ParameterName == f.Parameters[len(f.Parameters)-1].ParameterName
		if _, dup := c.args[p.ParameterName]; dup && !isLast {
			return nil, apierr.Validation(fmt.Sprintf("%s: %s is given twice", at, p.ParameterName), apierr.Item{Item: at, Description: "parameter given twice"})
		}
		if isLast {
			c.varArgs = append(c.varArgs, v)
			if _, set := c.args[p.ParameterName]; set {
				continue
			}
		}
		c.args[p.ParameterName] = v
	}
	for _, p := range f.Parameters {
		if _, ok := c.args[p.ParameterName]; !ok && p.Required {
			return nil, apierr.Validation(fmt.Sprintf("%s: %s needs its %s argument (%s)", join(field, "Arguments"), f.FunctionName, p.ParameterName, p.Description),
				apierr.Item{Item: join(field, "Arguments"), Description: "missing " + p.ParameterName})
		}
	}
	return c, nil
}

// join names a field of an invocation in errors: FunctionInvocations.0.FunctionName, or FunctionName
// for an invocation that is the entity itself (a Trigger).
func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// convert turns an argument's JSON value into the parameter's type.
func convert(v any, p Parameter) (any, error) {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			v = i
		} else {
			f, _ := n.Float64()
			v = f
		}
	}
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		v = int64(f)
	}
	var out any
	switch p.DataType {
	case TypeAny:
		switch v.(type) {
		case string, int64, bool:
			out = v
		default:
			return nil, fmt.Errorf("the value must be a string, an integer or a boolean, not %s", describe(v))
		}
	case TypeString:
		switch t := v.(type) {
		case string:
			out = t
		case int64, bool:
			out = fmt.Sprint(t)
		default:
			return nil, fmt.Errorf("the value must be a string, not %s", describe(v))
		}
	case TypeInt:
		switch t := v.(type) {
		case int64:
			out = t
		case string:
			i, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", t)
			}
			out = i
		default:
			return nil, fmt.Errorf("the value must be an integer, not %s", describe(v))
		}
	case TypeBool:
		switch t := v.(type) {
		case bool:
			out = t
		case string:
			b, err := strconv.ParseBool(t)
			if err != nil {
				return nil, fmt.Errorf("%q is not a boolean (true or false)", t)
			}
			out = b
		default:
			return nil, fmt.Errorf("the value must be a boolean, not %s", describe(v))
		}
	}
	return out, nil
}

// accept converts a value to the parameter's type and holds it to the parameter's bounds: EnumValues,
// Regexp (over its text) and Min and Max (integers).
func (p Parameter) accept(v any) (any, error) {
	out, err := convert(v, p)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprint(out)
	if len(p.EnumValues) > 0 && !slices.Contains(p.EnumValues, text) {
		return nil, fmt.Errorf("%q is not one of %s", text, strings.Join(p.EnumValues, ", "))
	}
	if p.Regexp != "" {
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("the parameter's Regexp does not compile: %s", err.Error())
		}
		if !re.MatchString(text) {
			return nil, fmt.Errorf("%q does not match %s", text, p.Regexp)
		}
	}
	if i, ok := out.(int64); ok {
		if p.Min != nil && i < *p.Min {
			return nil, fmt.Errorf("%d is less than %d", i, *p.Min)
		}
		if p.Max != nil && i > *p.Max {
			return nil, fmt.Errorf("%d is more than %d", i, *p.Max)
		}
	}
	return out, nil
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case float64:
		return "a fractional number"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// str, integer, boolean and arg read bound arguments (absent optional ones are zero values).
func (c *Call) str(name string) string {
	s, _ := c.args[name].(string)
	return s
}

func (c *Call) integer(name string) (int64, bool) {
	i, ok := c.args[name].(int64)
	return i, ok
}

func (c *Call) arg(name string) (any, bool) {
	v, ok := c.args[name]
	return v, ok
}
