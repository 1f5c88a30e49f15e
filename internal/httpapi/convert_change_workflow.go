package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/changeworkflow"
	"github.com/hubd/hubd/internal/entity"
)

// changeWorkflowEdge serves the ChangeWorkflow operations (edge_change_workflow.gen.go).
var changeWorkflowEdge = &edge[changeworkflow.ChangeWorkflow, changeworkflow.Fields, api.ChangeWorkflow, api.ExtendedChangeWorkflow]{
	service:   served(changeworkflow.Family),
	listing:   changeworkflow.ListEntity,
	toAPI:     changeWorkflowToAPI,
	fields:    changeWorkflowFields,
	relations: []relation[changeworkflow.ChangeWorkflow]{inSpace[changeworkflow.ChangeWorkflow]()},
	extended: func(w changeworkflow.ChangeWorkflow, a api.ChangeWorkflow, r *related) api.ExtendedChangeWorkflow {
		return api.ExtendedChangeWorkflow{ChangeWorkflow: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", w.SpaceID)}
	},
}

func changeWorkflowToAPI(w changeworkflow.ChangeWorkflow) api.ChangeWorkflow {
	s := changeWorkflowSpecToAPI(w.Spec)
	return api.ChangeWorkflow{ChangeWorkflowID: w.ID, SpaceID: w.SpaceID, OrganizationID: w.OrganizationID, Slug: w.Slug,
		DisplayName: w.DisplayName, Labels: w.Labels, Annotations: w.Annotations, DeleteGates: w.DeleteGates,
		Stages: s.Stages, Final: s.Final, CustomPrerequisites: s.CustomPrerequisites, HiddenReason: w.HiddenReason,
		EntityType: changeworkflow.EntityType, CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC(), Version: w.Version}
}

func changeWorkflowFields(b *api.ChangeWorkflow) changeworkflow.Fields {
	return changeworkflow.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		Spec: changeWorkflowSpecFromAPI(api.ChangeWorkflowSpec{Stages: b.Stages, Final: b.Final, CustomPrerequisites: b.CustomPrerequisites})}
}

// changeWorkflowSpecToAPI is a workflow's content on the wire (also a ChangeOrder's copy of it).
func changeWorkflowSpecToAPI(s changeworkflow.Spec) api.ChangeWorkflowSpec {
	s = s.Normalized()
	out := api.ChangeWorkflowSpec{Stages: make([]api.ChangeWorkflowStage, len(s.Stages)),
		CustomPrerequisites: make([]api.ChangeWorkflowPrerequisite, len(s.CustomPrerequisites))}
	for i, st := range s.Stages {
		out.Stages[i] = api.ChangeWorkflowStage{Name: st.Name, WhereSpace: st.WhereSpace, Prerequisites: st.Prerequisites}
	}
	if s.Final != nil {
		out.Final = &api.ChangeWorkflowFinalStage{Prerequisites: s.Final.Prerequisites}
	}
	for i, p := range s.CustomPrerequisites {
		out.CustomPrerequisites[i] = api.ChangeWorkflowPrerequisite{Name: p.Name, Expression: p.Expression, Description: p.Description}
	}
	return out
}

// changeWorkflowSpecFromAPI is the content a request sends.
func changeWorkflowSpecFromAPI(a api.ChangeWorkflowSpec) changeworkflow.Spec {
	var s changeworkflow.Spec
	for _, st := range a.Stages {
		s.Stages = append(s.Stages, changeworkflow.Stage{Name: st.Name, WhereSpace: st.WhereSpace, Prerequisites: st.Prerequisites})
	}
	if a.Final != nil {
		s.Final = &changeworkflow.FinalStage{Prerequisites: a.Final.Prerequisites}
	}
	for _, p := range a.CustomPrerequisites {
		s.CustomPrerequisites = append(s.CustomPrerequisites, changeworkflow.Prerequisite{Name: p.Name, Expression: p.Expression, Description: p.Description})
	}
	return s
}
