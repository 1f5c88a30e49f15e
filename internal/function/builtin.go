package function

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hubd/hubd/internal/configdata"
)

// Placeholders mark values a person or a Link must still provide: the string hubdplaceholder, or the
// integer 999999999 where a number is expected. no-placeholders fails while any is left.
const (
	PlaceholderString = "hubdplaceholder"
	PlaceholderInt    = int64(999999999)
)

func isPlaceholder(v any) bool {
	return v == PlaceholderString || v == PlaceholderInt
}

var (
	pathParam      = Parameter{ParameterName: "path", Description: "Path to the value: keys and indexes joined by dots; * for every element; ?key=value for the list elements whose key holds value; 'quoted' keys may hold dots and slashes", DataType: TypeString, Required: true, Example: "spec.replicas", isPath: true}
	valueParam     = Parameter{ParameterName: "value", Description: "The value to write; a string, an integer or a boolean, kept as given", DataType: TypeAny, Required: true, Example: "3"}
	containerParam = Parameter{ParameterName: "container-name", Description: "Name of the container (also init containers); * for every container", DataType: TypeString, Required: true, Example: "main"}
)

var everyToolchain = configdata.ToolchainTypes

// structured are the ToolchainTypes whose data has paths below its top (all but AppConfig/Text).
var structured = func() []string {
	var out []string
	for _, t := range configdata.ToolchainTypes {
		if t != configdata.AppConfigText {
			out = append(out, t)
		}
	}
	return out
}()

func init() {
	registerGeneric()
	registerValidators()
	registerKubernetes()
}

func registerGeneric() {
	register(&Function{Signature: Signature{
		FunctionName: "get-value", Description: "Reads the value at a path of every selected resource",
		Parameters: []Parameter{pathParam}, OutputInfo: Output{ResultName: "values", Description: "The values found", OutputType: OutputValues},
		Idempotent: true,
	}, run: func(x *call) (any, error) {
		return nonNil(x.find(x.path("path"))), nil
	}}, everyToolchain...)
	register(&Function{Signature: Signature{
		FunctionName: "get-values", Description: "Reads the values at several paths of every selected resource",
		Parameters: []Parameter{withName(pathParam, "paths", "Paths to read, one argument each")}, VarArgs: true,
		OutputInfo: Output{ResultName: "values", Description: "The values found, path by path", OutputType: OutputValues}, Idempotent: true,
	}, run: func(x *call) (any, error) {
		var out []Value
		for _, p := range x.varArgs {
			segs, _ := ParsePath(p.(string))
			out = append(out, x.find(segs)...)
		}
		return nonNil(out), nil
	}}, everyToolchain...)
	register(&Function{Signature: Signature{
		FunctionName: "set-value", Description: "Writes a value at a path of every selected resource, creating the maps the path lacks",
		Parameters: []Parameter{pathParam, valueParam}, OutputInfo: Output{OutputType: OutputNone},
		Mutating: true, Idempotent: true, Replayable: true,
	}, run: func(x *call) (any, error) {
		v, _ := x.arg("value")
		return nil, x.set(x.path("path"), v)
	}}, everyToolchain...)
	register(&Function{Signature: Signature{
		FunctionName: "set-values", Description: "Writes several values: arguments alternate path and value",
		Parameters: []Parameter{withName(valueParam, "path-and-value", "A path, then the value to write there; repeated")}, VarArgs: true,
		OutputInfo: Output{OutputType: OutputNone}, Mutating: true, Idempotent: true, Replayable: true,
	}, run: func(x *call) (any, error) {
		if len(x.varArgs)%2 != 0 {
			return nil, &configdata.EditError{Msg: "set-values takes pairs of path and value; the last path has no value"}
		}
		for i := 0; i < len(x.varArgs); i += 2 {
			p, ok := x.varArgs[i].(string)
			segs, err := ParsePath(p)
			if !ok || err != nil {
				return nil, &configdata.EditError{Msg: fmt.Sprintf("argument %d must be a path", i)}
			}
			if err := x.set(segs, x.varArgs[i+1]); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}}, everyToolchain...)
	register(&Function{Signature: Signature{
		FunctionName: "delete-path", Description: "Removes what a path reaches in every selected resource",
		Parameters: []Parameter{pathParam}, OutputInfo: Output{OutputType: OutputNone}, Mutating: true, Idempotent: true, Replayable: true,
	}, run: func(x *call) (any, error) {
		segs := x.path("path")
		if len(segs) == 0 {
			return nil, &configdata.EditError{Msg: "delete-path needs a path below the top of the data"}
		}
		for _, r := range x.resources {
			configdata.Delete(r.Root, segs)
		}
		return nil, nil
	}}, structured...)
	register(&Function{Signature: Signature{
		FunctionName: "list-paths", Description: "Lists the paths of every value of the selected resources",
		OutputInfo: Output{ResultName: "paths", Description: "Paths of the values (leaves)", OutputType: OutputPaths}, Idempotent: true,
	}, run: func(x *call) (any, error) {
		out := []Path{}
		for _, l := range x.find(nil) {
			for _, leaf := range (&configdata.Document{Resources: []configdata.Resource{{Value: l.Value}}}).Leaves() {
				out = append(out, Path{ResourceType: l.ResourceType, ResourceName: l.ResourceName, Path: leaf.Path})
			}
		}
		return out, nil
	}}, everyToolchain...)
	register(&Function{Signature: Signature{
		FunctionName: "resolve-placeholder", Description: "Writes a value at a path wherever it still holds a placeholder (" + PlaceholderString + " or 999999999); Links use it to fill needed values",
		Parameters: []Parameter{pathParam, valueParam}, OutputInfo: Output{OutputType: OutputNone}, Mutating: true, Idempotent: true, Replayable: true,
	}, run: func(x *call) (any, error) {
		v, _ := x.arg("value")
		n, err := configdata.ValueNode(v)
		if err != nil {
			return nil, err
		}
		for _, r := range x.resources {
			for _, l := range configdata.Find(r.Root, x.path("path")) {
				if cur, err := configdata.NodeValue(l.Node); err == nil && isPlaceholder(cur) {
					if _, err := configdata.Set(l.Node, nil, n); err != nil {
						return nil, err
					}
				}
			}
		}
		return nil, nil
	}}, everyToolchain...)
}

func registerValidators() {
	validator := func(name, description string, params []Parameter, varArgs bool, check func(x *call) []string) {
		register(&Function{Signature: Signature{
			FunctionName: name, Description: description, Parameters: params, VarArgs: varArgs,
			OutputInfo: Output{ResultName: "passed", Description: "Whether the data passed, and why not", OutputType: OutputValidation},
			Validating: true, Idempotent: true,
		}, run: func(x *call) (any, error) {
			problems := check(x)
			return Validation{Passed: len(problems) == 0, Details: nonNil(problems)}, nil
		}}, everyToolchain...)
	}
	validator("is-valid", "Passes when the data parses for its ToolchainType (data that does not is never stored)", nil, false, func(x *call) []string {
		out, err := x.tree.Render()
		if err == nil {
			_, err = configdata.Parse(x.tree.Toolchain, out)
		}
		if err != nil {
			return []string{err.Error()}
		}
		return nil
	})
	validator("path-exists", "Passes when every selected resource has a value at the path", []Parameter{pathParam}, false, func(x *call) []string {
		var problems []string
		for _, r := range x.resources {
			if len(configdata.Find(r.Root, x.path("path"))) == 0 {
				problems = append(problems, fmt.Sprintf("%s has no %s", resourceLabel(x.tree.Toolchain, r), x.str("path")))
			}
		}
		return problems
	})
	validator("value-matches", "Passes when every value at the path matches a regular expression (RE2, anchored by the pattern itself)",
		[]Parameter{pathParam, {ParameterName: "pattern", Description: "Regular expression the values must match", DataType: TypeString, Required: true, Example: "^[a-z0-9.-]+:[0-9.]+$"}}, false,
		func(x *call) []string {
			re, err := regexp.Compile(x.str("pattern"))
			if err != nil {
				return []string{"the pattern is not a regular expression: " + err.Error()}
			}
			var problems []string
			for _, v := range x.find(x.path("path")) {
				if s := fmt.Sprint(v.Value); !re.MatchString(s) {
					problems = append(problems, fmt.Sprintf("%s: %q does not match %s", valueLabel(v), s, x.str("pattern")))
				}
			}
			return problems
		})
	validator("value-in", "Passes when every value at the path is one of the allowed values",
		[]Parameter{pathParam, {ParameterName: "allowed", Description: "An allowed value; repeated", DataType: TypeString, Required: true, Example: "production"}}, true,
		func(x *call) []string {
			allowed := map[string]bool{}
			for _, a := range x.varArgs {
				allowed[a.(string)] = true
			}
			var problems []string
			for _, v := range x.find(x.path("path")) {
				if s := fmt.Sprint(v.Value); !allowed[s] {
					problems = append(problems, fmt.Sprintf("%s: %q is not one of %s", valueLabel(v), s, strings.Join(slices.Sorted(maps.Keys(allowed)), ", ")))
				}
			}
			return problems
		})
	validator("no-placeholders", "Passes when no value still holds a placeholder ("+PlaceholderString+" or 999999999)", nil, false, func(x *call) []string {
		var problems []string
		for _, r := range x.resources {
			typ, name := r.Identity(x.tree.Toolchain)
			v, err := configdata.NodeValue(r.Root)
			if err != nil {
				continue
			}
			for _, l := range (&configdata.Document{Resources: []configdata.Resource{{Type: typ, Name: name, Value: v}}}).Leaves() {
				if isPlaceholder(l.Value) {
					problems = append(problems, fmt.Sprintf("%s: a placeholder is left", valueLabel(Value{ResourceType: typ, ResourceName: name, Path: l.Path})))
				}
			}
		}
		return problems
	})
}

func resourceLabel(toolchain string, r *configdata.TreeResource) string {
	typ, name := r.Identity(toolchain)
	if typ == "" {
		return "the data"
	}
	return typ + " " + name
}

func valueLabel(v Value) string {
	if v.ResourceType == "" {
		return v.Path
	}
	return v.ResourceType + " " + v.ResourceName + " " + v.Path
}

func withName(p Parameter, name, description string) Parameter {
	p.ParameterName, p.Description = name, description
	return p
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
