package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/periodic"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// RunEntityType is the CommandRun's type name.
const RunEntityType = "CommandRun"

// Run deadlines: a run waits for a bot 5 minutes by default and at most an hour.
const (
	DefaultDeadlineSeconds = 300
	MaxDeadlineSeconds     = 3600
)

// Run is a CommandRun.
type Run struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	SpaceID        uuid.UUID
	ChannelID      uuid.UUID
	Command        string
	Status         string
	Options        map[string]string
	Parameters     map[string]any
	Result         json.RawMessage // nil until a bot answers with one
	ErrorMessage   string
	Deadline       time.Time
	CreatedAt      time.Time
	DeliveredAt    *time.Time
	CompletedAt    *time.Time
	UserID         uuid.UUID
}

func runFromRow(r *db.CommandRun) (Run, error) {
	out := Run{ID: r.CommandRunID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, ChannelID: r.ChannelID, Command: r.Command,
		Status: r.Status, Result: r.Result, ErrorMessage: r.ErrorMessage, Deadline: r.Deadline, CreatedAt: r.CreatedAt,
		DeliveredAt: r.DeliveredAt, CompletedAt: r.CompletedAt, UserID: r.UserID}
	var err error
	if out.Options, err = store.DecodeJSON[map[string]string](r.Options); err != nil {
		return out, err
	}
	if out.Parameters, err = store.DecodeJSON[map[string]any](r.Parameters); err != nil {
		return out, err
	}
	if out.Options == nil {
		out.Options = map[string]string{}
	}
	if out.Parameters == nil {
		out.Parameters = map[string]any{}
	}
	return out, nil
}

// RunPayload is the payload of command_run.created and command_run.updated events.
type RunPayload struct {
	EntityType string
	EntityID   uuid.UUID
	ChannelID  uuid.UUID
	Command    string
	Status     string
	SpaceSlug  string `json:",omitempty"`
}

// A run's events (command_run.created, command_run.updated) never change what members may do: they are
// quiet.
func init() { entity.DeclareEvents("command_run", true) }

func (r Run) changeEvent(eventType, spaceSlug string) event.Event {
	return event.Event{OrganizationID: r.OrganizationID, EventType: eventType, SpaceID: &r.SpaceID,
		SubjectEntityType: RunEntityType, SubjectEntityID: r.ID,
		Payload: RunPayload{EntityType: RunEntityType, EntityID: r.ID, ChannelID: r.ChannelID, Command: r.Command, Status: r.Status, SpaceSlug: spaceSlug}}
}

// RunListEntity is how CommandRuns are listed.
var RunListEntity = listquery.Define(&listquery.Entity{
	Name: RunEntityType, From: "command_run", Columns: "command_run.*", ID: "CommandRunID", Org: "command_run.organization_id",
	// A run is read with ViewChildren on its Space.
	Visibility: &listquery.Visibility{Space: "command_run.space_id", SpacePermissions: []authz.Permission{authz.ViewChildren}},
	Attributes: []listquery.Attribute{
		{Name: "CommandRunID", Type: listquery.UUID, SQL: "command_run.command_run_id", Filterable: true, Orderable: true, Always: true},
		{Name: "ChannelID", Type: listquery.UUID, SQL: "command_run.channel_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "command_run.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "command_run.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Command", Type: listquery.String, SQL: "command_run.command", Filterable: true, Orderable: true},
		{Name: "Status", Type: listquery.String, SQL: "command_run.status", Filterable: true, Orderable: true, Always: true},
		{Name: "UserID", Type: listquery.UUID, SQL: "command_run.user_id", Filterable: true, Orderable: true},
		{Name: "ErrorMessage", Type: listquery.String, SQL: "command_run.error_message", Filterable: true},
		{Name: "Deadline", Type: listquery.Time, SQL: "command_run.deadline", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "command_run.created_at", Filterable: true, Orderable: true},
		{Name: "DeliveredAt", Type: listquery.Time, SQL: "command_run.delivered_at", Filterable: true, Nullable: true},
		{Name: "CompletedAt", Type: listquery.Time, SQL: "command_run.completed_at", Filterable: true, Nullable: true},
		{Name: "Options", Type: listquery.Opaque}, {Name: "Parameters", Type: listquery.Opaque},
		{Name: "Result", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"}},
})

// RunRequest is what CreateRun takes.
type RunRequest struct {
	Command         string
	SpaceID         *uuid.UUID
	ChannelID       *uuid.UUID
	Options         map[string]string
	Parameters      map[string]any
	DeadlineSeconds int
}

// CreateRun resolves the command to its Channel, parses the options and stores the run, Waiting. The
// caller needs Use on the Channel and CreateChildren on its Space.
func (s *Service) CreateRun(ctx context.Context, sc authz.Scope, req RunRequest) (Run, error) {
	deadline := req.DeadlineSeconds
	if deadline == 0 {
		deadline = DefaultDeadlineSeconds
	}
	if deadline < 1 || deadline > MaxDeadlineSeconds {
		return Run{}, apierr.Validation(fmt.Sprintf("DeadlineSeconds is 1 to %d (the default is %d)", MaxDeadlineSeconds, DefaultDeadlineSeconds),
			apierr.Item{Item: "DeadlineSeconds", Description: "out of range"})
	}
	if len(req.Options) > 0 && len(req.Parameters) > 0 {
		return Run{}, apierr.Validation("give Options or Parameters, not both")
	}
	var out Run
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		row, err := s.channelForCommand(ctx, sc, tx.Q, req)
		if err != nil {
			return err
		}
		ch, err := fromRow(row)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Use, ch.Target()); err != nil {
			return err
		}
		sp, st, err := space.VisibleParent(ctx, sc, tx.Q, ch.SpaceID)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.CreateChildren, st); err != nil {
			return err
		}
		params, err := parseParameters(ch, req, func(entityType, ref string) (uuid.UUID, error) {
			return s.resolveOption(ctx, sc, tx, ch, entityType, ref)
		})
		if err != nil {
			return err
		}
		options := req.Options
		if options == nil {
			options = map[string]string{}
		}
		inserted, err := tx.Q.CommandRunInsert(ctx, db.CommandRunInsertParams{CommandRunID: uuid.New(), OrganizationID: sc.OrganizationID,
			SpaceID: ch.SpaceID, ChannelID: ch.ID, Command: req.Command, Options: store.EncodeJSON(options),
			Parameters: store.EncodeJSON(params), UserID: sc.UserID, DeadlineSeconds: int32(deadline)})
		if err != nil {
			return err
		}
		if out, err = runFromRow(inserted); err != nil {
			return err
		}
		// The event's commit also wakes the Channel's long polls on every replica.
		tx.Emit(out.changeEvent("command_run.created", sp.Slug))
		return nil
	})
	return out, err
}

// channelForCommand finds the one Channel the run is for: the named one, or the only one declaring the
// command in the organization (or the chosen Space).
func (s *Service) channelForCommand(ctx context.Context, sc authz.Scope, q *db.Queries, req RunRequest) (*db.Channel, error) {
	if req.Command == "" {
		return nil, apierr.Validation("Command is required", apierr.Item{Item: "Command", Description: "required"})
	}
	if req.SpaceID != nil {
		if _, err := space.Parent(ctx, sc, q, *req.SpaceID); err != nil {
			if apierr.Is(err, apierr.TypeNotFound) {
				return nil, apierr.Validation(fmt.Sprintf("no Space %s in your organization", req.SpaceID), apierr.Item{Item: "SpaceID", Description: "not found"})
			}
			return nil, err
		}
	}
	if req.ChannelID != nil {
		row, err := q.ChannelGetInOrg(ctx, db.ChannelGetInOrgParams{OrganizationID: sc.OrganizationID, ChannelID: *req.ChannelID})
		if apierr.Is(err, apierr.TypeNotFound) {
			return nil, apierr.Validation(fmt.Sprintf("no Channel %s in your organization", req.ChannelID), apierr.Item{Item: "ChannelID", Description: "not found"})
		}
		if err != nil {
			return nil, err
		}
		if req.SpaceID != nil && row.SpaceID != *req.SpaceID {
			return nil, apierr.Validation("the Channel is not in the given Space", apierr.Item{Item: "ChannelID", Description: "not in SpaceID"})
		}
		ch, err := fromRow(row)
		if err != nil {
			return nil, err
		}
		if _, ok := ch.Commands[req.Command]; !ok {
			return nil, apierr.Validation(fmt.Sprintf("Channel %s does not declare command %q", ch.Slug, req.Command), apierr.Item{Item: "Command", Description: "not declared by the Channel"})
		}
		return row, nil
	}
	rows, err := q.ChannelsDeclaring(ctx, db.ChannelsDeclaringParams{OrganizationID: sc.OrganizationID, Command: req.Command, SpaceID: req.SpaceID})
	if err != nil {
		return nil, err
	}
	scope := "in your organization"
	if req.SpaceID != nil {
		scope = "in that Space"
	}
	switch len(rows) {
	case 0:
		return nil, apierr.Validation(fmt.Sprintf("no Channel %s declares command %q", scope, req.Command), apierr.Item{Item: "Command", Description: "not declared"})
	case 1:
		return rows[0], nil
	default:
		return nil, apierr.Validation(fmt.Sprintf("several Channels %s declare command %q; name one with ChannelID", scope, req.Command),
			apierr.Item{Item: "ChannelID", Description: "required when the command is ambiguous"})
	}
}

// parseParameters turns Options (strings) or Parameters (JSON) into the parameters the bot receives,
// by each option's DataType; entity-typed options become IDs (resolve). Every problem is reported at once.
func parseParameters(ch Channel, req RunRequest, resolve refResolver) (map[string]any, error) {
	cmd := ch.Commands[req.Command]
	declared := map[string]Option{}
	for _, o := range cmd.Options {
		declared[o.Name] = o
	}
	field, given := "Options", map[string]any{}
	for k, v := range req.Options {
		given[k] = v
	}
	if len(req.Parameters) > 0 {
		field, given = "Parameters", req.Parameters
	}
	var items []apierr.Item
	out := map[string]any{}
	names := slices.Sorted(maps.Keys(given))
	for _, name := range names {
		o, ok := declared[name]
		if !ok {
			items = append(items, apierr.Item{Item: field + "." + name, Description: fmt.Sprintf("not an option of command %s", req.Command)})
			continue
		}
		v, err := parseValue(o, given[name], resolve)
		var failure *apierr.Error
		if errors.As(err, &failure) {
			return nil, err // the database failed while resolving it: not the option's fault
		}
		if err != nil {
			items = append(items, apierr.Item{Item: field + "." + name, Description: err.Error()})
			continue
		}
		out[name] = v
	}
	for _, o := range cmd.Options {
		if _, ok := given[o.Name]; !ok && o.Required {
			items = append(items, apierr.Item{Item: field + "." + o.Name, Description: "required"})
		}
	}
	if len(items) > 0 {
		return nil, apierr.Validation(fmt.Sprintf("the options of command %s are not valid", req.Command), items...)
	}
	return out, nil
}

// parseValue parses one option value: a string from Options, or any JSON value from Parameters.
func parseValue(o Option, v any, resolve refResolver) (any, error) {
	s, isString := v.(string)
	switch o.DataType {
	case "int":
		if isString {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", s)
			}
			return n, nil
		}
		if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return nil, fmt.Errorf("not an integer")
	case "bool":
		if isString {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not true or false", s)
			}
			return b, nil
		}
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("not a boolean")
	case "string", "":
		if !isString {
			return nil, fmt.Errorf("not a string")
		}
		return s, nil
	default:
		if !isString {
			return nil, fmt.Errorf("a %s is given by its Slug or ID", o.DataType)
		}
		id, err := resolve(o.DataType, s)
		if err != nil {
			return nil, err
		}
		return id.String(), nil
	}
}

// refResolver finds an entity-typed option's entity (by its DataType) by ID or Slug.
type refResolver func(entityType, ref string) (uuid.UUID, error)

// resolveOption finds an entity-typed option's entity by ID or Slug through its family's resolver: a Space
// of the organization, or a Unit, Target or Tag of the Channel's Space, that the caller may view.
func (s *Service) resolveOption(ctx context.Context, sc authz.Scope, c store.Conn, ch Channel, entityType, ref string) (uuid.UUID, error) {
	resolve, ok := s.Resolvers[entityType]
	if !ok {
		return uuid.Nil, fmt.Errorf("the option's DataType %q is not known", entityType)
	}
	id, err := resolve(ctx, sc, c, ch.SpaceID, ref)
	if apierr.Is(err, apierr.TypeNotFound) {
		where := "the Channel's Space"
		if entityType == "Space" {
			where = "your organization"
		}
		return uuid.Nil, fmt.Errorf("no %s %q in %s", entityType, ref, where)
	}
	return id, err
}

// runOfChannel reads a run of a Channel the caller can see, with the Channel.
func (s *Service) runOfChannel(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, ref string, runID uuid.UUID) (Channel, Run, error) {
	ch, err := resolve(ctx, sc, c, spaceID, ref, false)
	if err != nil {
		return ch, Run{}, err
	}
	r, err := c.Queries().CommandRunGet(ctx, db.CommandRunGetParams{OrganizationID: ch.OrganizationID, ChannelID: ch.ID, CommandRunID: runID})
	if err != nil {
		return ch, Run{}, apierr.NotFoundAs(err, RunEntityType, runID.String())
	}
	run, err := runFromRow(r)
	return ch, run, err
}

// GetRun reads one run; the caller needs ViewChildren on the Channel's Space.
func (s *Service) GetRun(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, runID uuid.UUID) (Run, error) {
	_, run, err := s.runOfChannel(ctx, sc, s.Store.Conn(), spaceID, ref, runID)
	if err != nil {
		return run, err
	}
	_, st, err := space.VisibleParent(ctx, sc, s.Store.Q(), spaceID)
	if err != nil {
		return run, err
	}
	return run, authz.Check(sc, authz.ViewChildren, st)
}

// ListRuns returns a page of runs (of one Channel when ref is set) whose Spaces the caller may
// ViewChildren of (the list's SQL keeps to them).
func (s *Service) ListRuns(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, ref string, path string, params listquery.Params) (listquery.Page[Run], error) {
	q := listquery.Query{Entity: RunListEntity, Caller: sc, Path: path, Params: params}
	if spaceID != nil {
		ch, err := resolve(ctx, sc, s.Store.Conn(), *spaceID, ref, false)
		if err != nil {
			return listquery.Page[Run]{}, err
		}
		q.Scope = []listquery.Condition{{Column: "command_run.channel_id", Value: ch.ID}}
	}
	page, err := listquery.Run[db.CommandRun](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[Run]{}, err
	}
	return listquery.MapPage(page, runFromRow)
}

// currentStatus re-reads a run's status after a conditional update found it changed, for the message.
func currentStatus(ctx context.Context, q *db.Queries, r Run) string {
	row, err := q.CommandRunGet(ctx, db.CommandRunGetParams{OrganizationID: r.OrganizationID, ChannelID: r.ChannelID, CommandRunID: r.ID})
	if err != nil {
		return r.Status
	}
	return row.Status
}

// CancelRun cancels a run still Waiting; the caller needs Use on the Channel.
func (s *Service) CancelRun(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, runID uuid.UUID) (Run, error) {
	return s.transition(ctx, sc, spaceID.String(), ref, runID, authz.Use,
		"only a run still Waiting can be cancelled (a delivered run runs to its outcome)",
		func(q *db.Queries, ch Channel) (*db.CommandRun, error) {
			return q.CommandRunCancel(ctx, db.CommandRunCancelParams{OrganizationID: ch.OrganizationID, ChannelID: ch.ID, CommandRunID: runID})
		})
}

// transition moves a run to a new state by a conditional update, in one transaction: the caller needs
// perm on the Channel; when the update finds the run in another state, the answer is 409 with refusal.
// It emits command_run.updated.
func (s *Service) transition(ctx context.Context, sc authz.Scope, spaceRef, ref string, runID uuid.UUID, perm authz.Permission, refusal string,
	update func(*db.Queries, Channel) (*db.CommandRun, error)) (Run, error) {
	var out Run
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		spaceID, err := spaceByRef(ctx, sc, tx.Q, spaceRef)
		if err != nil {
			return err
		}
		ch, run, err := s.runOfChannel(ctx, sc, tx, spaceID, ref, runID)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, perm, ch.Target()); err != nil {
			return err
		}
		row, err := update(tx.Q, ch)
		if apierr.Is(err, apierr.TypeNotFound) {
			return apierr.Conflict("the run is %s; %s", currentStatus(ctx, tx.Q, run), refusal)
		}
		if err != nil {
			return err
		}
		if out, err = runFromRow(row); err != nil {
			return err
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(out.changeEvent("command_run.updated", sp.Slug))
		return nil
	})
	return out, err
}

// RunSweeperName is the system principal the command-run sweep acts as: ending a run whose time is up
// is the service's own work in the run's organization, done by no User.
const RunSweeperName = "command-run-sweeper"

// SweepRuns ends the runs whose time is up (expired deadlines, unanswered deliveries) and returns how
// many. Each run is ended, and its command_run.updated event emitted, as RunSweeperName in the run's
// organization (authz.SystemScope); neither the run nor the event records an acting User. It is safe on
// every replica at once.
func (s *Service) SweepRuns(ctx context.Context) (int, error) {
	ended := map[uuid.UUID]int{} // runs ended per organization
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		clear(ended)
		rows, err := tx.Q.CommandRunSweep(ctx, AnswerSeconds)
		if err != nil {
			return err
		}
		for _, r := range rows {
			run, err := runFromRow(&db.CommandRun{CommandRunID: r.CommandRunID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID,
				ChannelID: r.ChannelID, Command: r.Command, Options: r.Options, Parameters: r.Parameters, Status: r.Status, Result: r.Result,
				ErrorMessage: r.ErrorMessage, UserID: r.UserID, Deadline: r.Deadline, DeliveredToken: r.DeliveredToken,
				CreatedAt: r.CreatedAt, DeliveredAt: r.DeliveredAt, CompletedAt: r.CompletedAt})
			if err != nil {
				return err
			}
			ended[run.OrganizationID]++
			tx.Emit(run.changeEvent("command_run.updated", r.SpaceSlug))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for orgID, count := range ended {
		n += count
		if s.Logger != nil {
			s.Logger.Debug("ended command runs whose time is up", "system", RunSweeperName, "organization", orgID, "runs", count)
		}
	}
	return n, nil
}

// runRetention is how long finished runs stay readable.
const runRetention = 7 * 24 * time.Hour

// PruneRuns deletes finished runs older than runRetention, in batches, and returns how many. It is
// housekeeping across organizations, acting as no principal, so it takes no Scope.
func (s *Service) PruneRuns(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := s.Store.Q().CommandRunPrune(ctx, db.CommandRunPruneParams{RetentionSeconds: int64(runRetention / time.Second), Batch: 1000})
		if err != nil {
			return total, err
		}
		total += n
		if n < 1000 {
			return total, nil
		}
	}
}

// RunSweeper sweeps every interval, and prunes old runs every hour, until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	lastPrune := time.Time{}
	periodic.Run(ctx, interval, func(ctx context.Context) {
		if _, err := s.SweepRuns(ctx); err != nil && ctx.Err() == nil {
			s.Logger.Warn("sweeping command runs", "err", err)
		}
		if time.Since(lastPrune) > time.Hour {
			lastPrune = time.Now()
			if _, err := s.PruneRuns(ctx); err != nil && ctx.Err() == nil {
				s.Logger.Warn("pruning command runs", "err", err)
			}
		}
	})
}
