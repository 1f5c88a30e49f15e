package unit

import (
	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/changeset"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/tag"
)

func attr(name string, t listquery.Type, sql string, opts ...func(*listquery.Attribute)) listquery.Attribute {
	a := listquery.Attribute{Name: name, Type: t, SQL: sql, Filterable: t != listquery.Opaque}
	for _, o := range opts {
		o(&a)
	}
	return a
}

func orderable(a *listquery.Attribute) { a.Orderable = true }
func always(a *listquery.Attribute)    { a.Always = true }
func nullable(a *listquery.Attribute)  { a.Nullable = true }

// nullableUUID orders a nullable UUID column as the nil UUID (its index uses the same expression).
func nullableUUID(sql string) func(*listquery.Attribute) {
	return func(a *listquery.Attribute) {
		a.Nullable, a.Orderable = true, true
		a.OrderSQL = "COALESCE(" + sql + ", '00000000-0000-0000-0000-000000000000'::uuid)"
	}
}

func opaque(names ...string) []listquery.Attribute {
	out := make([]listquery.Attribute, len(names))
	for i, n := range names {
		out[i] = listquery.Attribute{Name: n, Type: listquery.Opaque}
	}
	return out
}

// ListEntity is how Units are listed: the attributes and order fields of the API. Every orderable one
// has an index (migration 000003); where_data is served by the GIN index on head_doc. Lists and reads
// leave the data projection and the search text unread (NULL): no answer shows them, and the projection
// is about as large as the data; a write's locked read has them.
var ListEntity = listquery.Standard{Table: "unit", ID: "UnitID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name: EntityType, Columns: listquery.ColumnsOf[db.Unit]("unit", "head_doc", "search_text"),
	LockedColumns: listquery.ColumnsOf[db.Unit]("unit"), DataColumn: "unit.head_doc",
	ContainsAttrs: []string{"Slug", "DisplayName", "ToolchainType", "LastChangeDescription", "Labels", "Annotations"},
	Attributes: append([]listquery.Attribute{
		listquery.After("DeleteGates"),
		attr("DestroyGates", listquery.BoolMap, "unit.destroy_gates"),
		// ToolchainType says how to read the Unit's data: select always returns it.
		attr("ToolchainType", listquery.String, "unit.toolchain_type", orderable, always),
		attr("ProviderType", listquery.String, "unit.provider_type", orderable),
		attr("TargetID", listquery.UUID, "unit.target_id", nullableUUID("unit.target_id")),
		attr("ChangeSetID", listquery.UUID, "unit.change_set_id", nullableUUID("unit.change_set_id")),
		attr("LastChangeDescription", listquery.String, "unit.last_change_description", orderable),
		attr("DataHash", listquery.String, "unit.data_hash", orderable),
		attr("DataSize", listquery.Int, "unit.data_size"),
		attr("HeadRevisionID", listquery.UUID, "unit.head_revision_id", nullableUUID("unit.head_revision_id")),
		attr("HeadRevisionNum", listquery.Int, "unit.head_revision_num", orderable),
		attr("HeadMutationNum", listquery.Int, "unit.head_mutation_num"),
		attr("HeadUnitActionNum", listquery.Int, "unit.head_unit_action_num", orderable),
		attr("HeadUnitEventNum", listquery.Int, "unit.head_unit_event_num", orderable),
		attr("LastReleasedRevisionNum", listquery.Int, "unit.last_released_revision_num", orderable),
		attr("UpstreamUnitID", listquery.UUID, "unit.upstream_unit_id", nullableUUID("unit.upstream_unit_id")),
		attr("UpstreamSpaceID", listquery.UUID, "unit.upstream_space_id", nullable),
		attr("UpstreamRevisionNum", listquery.Int, "unit.upstream_revision_num", orderable),
		// The Links whose From Unit it is (index link_from_unit_idx).
		attr("FromLinkID", listquery.UUIDList, "ARRAY(SELECT hubd_link.link_id FROM link hubd_link WHERE hubd_link.organization_id = unit.organization_id AND hubd_link.from_unit_id = unit.unit_id ORDER BY hubd_link.link_id)"),
		listquery.After("EntityType"),
	}, opaque("ApplyGates", "ApplyWarnings", "ValidationErrors", "ValidationWarnings",
		"ValidationTriggerIDs", "ValueTriggerIDs", "Values", "Conflicts", "PathAnnotations", "LinkFindings", "NeededPaths", "ProvidedPaths",
		"UnitEventID")...),
	Includes: []listquery.Include{
		{Name: "HeadRevisionNum", Field: "HeadRevision", Type: RevisionEntityType},
		{Name: "UpstreamUnitID", Field: "UpstreamUnit", Type: EntityType},
		{Name: "UpstreamSpaceID", Field: "UpstreamSpace", Type: space.EntityType},
		{Name: "TargetID", Field: "Target"}, {Name: "HeadMutationNum", Field: "HeadMutation", Type: MutationEntityType},
		{Name: "LastReleasedRevisionNum", Field: "LastReleasedRevision", Type: RevisionEntityType},
		{Name: "ChangeSetID", Field: "ChangeSet", Type: changeset.EntityType}, {Name: "FromLinkID", Field: "FromLink", Type: "Link"},
		{Name: "UnitEventID", Field: "LatestUnitEvent", Type: UnitEventEntityType},
	},
})

// visibleWithUnit is the Visibility of the rows of table (Revisions, Mutations): each is visible with its
// Unit.
func visibleWithUnit(table string) *listquery.Visibility {
	return &listquery.Visibility{Space: table + ".space_id", Owner: &listquery.Owner{From: "unit hubd_owner",
		Join: "hubd_owner.unit_id = " + table + ".unit_id AND hubd_owner.organization_id = " + table + ".organization_id", Grants: "hubd_owner.permissions"}}
}

// RevisionList is how Revisions are listed (per Unit, and across the organization with distinct_on).
var RevisionList = listquery.Define(&listquery.Entity{
	Name: RevisionEntityType, From: "revision", Columns: "revision.*", ID: "RevisionID", Org: "revision.organization_id",
	Contains: "revision.description", HiddenReason: "revision.hidden_reason",
	Visibility:    visibleWithUnit("revision"),
	ContainsAttrs: []string{"Description"},
	Attributes: append([]listquery.Attribute{
		attr("RevisionID", listquery.UUID, "revision.revision_id", orderable, always),
		attr("RevisionNum", listquery.Int, "revision.revision_num", orderable),
		attr("UnitID", listquery.UUID, "revision.unit_id", orderable, always),
		attr("SpaceID", listquery.UUID, "revision.space_id", orderable, always),
		attr("OrganizationID", listquery.UUID, "revision.organization_id", orderable, always),
		attr("ChangeSetID", listquery.UUID, "revision.change_set_id", nullableUUID("revision.change_set_id")),
		attr("Description", listquery.String, "revision.description", orderable),
		attr("Source", listquery.String, "revision.source", orderable),
		attr("UserID", listquery.UUID, "revision.user_id", orderable),
		attr("UserAgent", listquery.String, "revision.user_agent", orderable),
		attr("DataHash", listquery.String, "revision.data_hash", orderable),
		attr("DataSize", listquery.Int, "revision.data_size"),
		attr("HiddenReason", listquery.String, "revision.hidden_reason", orderable),
		attr("CreatedAt", listquery.Time, "revision.created_at", orderable),
		attr("UpdatedAt", listquery.Time, "revision.updated_at", orderable),
		attr("Tags", listquery.StringMap, "revision.tags"),
	}, opaque("Attestations", "ChangeOrders", "Releases", "ApplyGates", "ApplyWarnings", "ValidationErrors",
		"ValidationWarnings", "ValidationPassed", "ValidationTriggerIDs", "ValueTriggerIDs", "Values", "Conflicts",
		"LinkFindings", "NeededPaths", "ProvidedPaths", "EntityType")...),
	Includes: []listquery.Include{
		{Name: "UnitID", Field: "Unit"}, {Name: "SpaceID", Field: "Space"}, {Name: "OrganizationID", Field: "Organization"},
		{Name: "UserID", Field: "User"}, {Name: "Tags", Field: "Tags", Type: tag.EntityType},
		{Name: "ChangeSetID", Field: "ChangeSet", Type: changeset.EntityType}, {Name: "Attestations", Field: "Attestations", Type: "Attestation", NamedBy: true},
		{Name: "ChangeOrders", Field: "ChangeOrders", Type: "ChangeOrder", NamedBy: true},
		{Name: "Releases", Field: "Releases", Type: "Release", NamedBy: true},
	},
})

// mutationFunctionName is a Mutation's FunctionName: the function_invocation jsonb holds it (there is
// no column), empty when the change was not a function's.
const mutationFunctionName = "COALESCE(mutation.function_invocation ->> 'FunctionName', '')"

// MutationList is how a Unit's Mutations are listed.
var MutationList = listquery.Define(&listquery.Entity{
	Name: MutationEntityType, From: "mutation", Columns: "mutation.*", ID: "MutationID", Org: "mutation.organization_id",
	// A Unit's Mutations are few enough (the list is scoped to one Unit) to match without a text index.
	Contains: mutationFunctionName, ContainsAttrs: []string{"FunctionName"},
	HiddenReason: "mutation.hidden_reason",
	Visibility:   visibleWithUnit("mutation"),
	Attributes: append([]listquery.Attribute{
		attr("MutationID", listquery.UUID, "mutation.mutation_id", orderable, always),
		attr("MutationNum", listquery.Int, "mutation.mutation_num", orderable),
		attr("RevisionID", listquery.UUID, "mutation.revision_id", orderable, always),
		attr("RevisionNum", listquery.Int, "mutation.revision_num", orderable),
		attr("UnitID", listquery.UUID, "mutation.unit_id", orderable, always),
		attr("SpaceID", listquery.UUID, "mutation.space_id", always),
		attr("OrganizationID", listquery.UUID, "mutation.organization_id", orderable, always),
		attr("FunctionName", listquery.String, mutationFunctionName, orderable),
		attr("RestoredRevisionNum", listquery.Int, "mutation.restored_revision_num", orderable),
		attr("MergeBaseRevisionNum", listquery.Int, "mutation.merge_base_revision_num", orderable),
		attr("MergeEndRevisionNum", listquery.Int, "mutation.merge_end_revision_num", orderable),
		attr("MergeSourceID", listquery.UUID, "mutation.merge_source_id", nullableUUID("mutation.merge_source_id")),
		attr("LinkID", listquery.UUID, "mutation.link_id", nullableUUID("mutation.link_id")),
		attr("TriggerID", listquery.UUID, "mutation.trigger_id", nullableUUID("mutation.trigger_id")),
		attr("InvocationID", listquery.UUID, "mutation.invocation_id", nullableUUID("mutation.invocation_id")),
		attr("BridgeWorkerID", listquery.UUID, "mutation.bridge_worker_id", nullableUUID("mutation.bridge_worker_id")),
		attr("Subgroup", listquery.String, "mutation.subgroup", orderable),
		attr("ReplayOutcome", listquery.String, "mutation.replay_outcome", orderable),
		attr("ReplayReason", listquery.String, "mutation.replay_reason", orderable),
		attr("HiddenReason", listquery.String, "mutation.hidden_reason", orderable),
		attr("CreatedAt", listquery.Time, "mutation.created_at", orderable),
		attr("UpdatedAt", listquery.Time, "mutation.updated_at", orderable),
		{Name: "FunctionInvocation", Type: listquery.Object, SQL: "mutation.function_invocation", Filterable: true, Elem: functionInvocation},
	}, opaque("InvocationParams", "EntityType")...),
	Includes: []listquery.Include{
		{Name: "RevisionID", Field: "Revision"}, {Name: "UnitID", Field: "Unit"},
		{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"},
		{Name: "TriggerID", Field: "Trigger"}, {Name: "InvocationID", Field: "Invocation"},
		{Name: "MergeSourceID", Field: "MergeSource", Type: EntityType}, {Name: "LinkID", Field: "Link", Type: "Link"},
	},
})

// functionInvocation is the where form of Mutation.FunctionInvocation: FunctionName, Guards.<reason>,
// and the Arguments list (by index .0.Value, any .*.Value, or by name ?ParameterName=<name>.Value).
var functionInvocation = &listquery.Entity{
	Name: "FunctionInvocation", ID: "FunctionName",
	Attributes: []listquery.Attribute{
		attr("FunctionName", listquery.String, "({e} ->> 'FunctionName')"),
		attr("WhereResource", listquery.String, "({e} ->> 'WhereResource')"),
		attr("Guards", listquery.StringMap, "({e} -> 'Guards')"),
		{Name: "Arguments", Type: listquery.EntityList, SQL: "({e} -> 'Arguments')", Filterable: true, Elem: &listquery.Entity{
			Name: "FunctionArgument", ID: "Value",
			Attributes: []listquery.Attribute{
				attr("ParameterName", listquery.String, "({e} ->> 'ParameterName')"),
				attr("Value", listquery.String, "({e} ->> 'Value')"),
			},
		}},
	},
}
