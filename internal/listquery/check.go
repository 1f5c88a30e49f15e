package listquery

import (
	"errors"
	"fmt"

	"github.com/hubd/hubd/internal/apierr"
)

// CheckDefinition validates a stored selection of e (a Filter's Where, WhereData and ResourceType, and
// IncludeHidden) as a list would use it, so a definition that would fail is refused when it is written,
// never when it is used. A problem is 400 Validation naming field (e.g. "Where") and, for expressions, the
// position. Only lists of entities with a DataColumn (Units) take WhereData and ResourceType.
func CheckDefinition(e *Entity, where, whereData, resourceType, includeHidden string) error {
	if err := CheckWhere(e, "Where", where); err != nil {
		return err
	}
	if e.DataColumn == "" && (whereData != "" || resourceType != "") {
		return apierr.Validation(fmt.Sprintf("%s lists take no where_data or resource_type: WhereData and ResourceType must be empty", e.Name),
			apierr.Item{Item: "WhereData", Description: "not for " + e.Name})
	}
	if _, err := DataCondition("data", whereData, resourceType); err != nil {
		return definitionError("WhereData", err)
	}
	if _, err := parseHidden(includeHidden); err != nil {
		return definitionError("IncludeHidden", err)
	}
	return nil
}

// CheckWhere validates a stored where expression over e's attributes as a list would use it (400
// Validation naming field).
func CheckWhere(e *Entity, field, where string) error {
	if where == "" {
		return nil
	}
	expr, err := Parse(where)
	if err == nil {
		_, err = compileWhere(e, expr, &binder{})
	}
	if err != nil {
		return definitionError(field, err)
	}
	return nil
}

// definitionError restates a list parameter's error as the Validation of the stored field it came from.
func definitionError(field string, err error) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		return apierr.Validation(fmt.Sprintf("%s %s", field, se.Error()), apierr.Item{Item: field, Description: se.Error()})
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return apierr.Validation(field+": "+ae.Message, apierr.Item{Item: field, Description: ae.Message})
	}
	return err
}
