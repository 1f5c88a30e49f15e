package configdata

// NamedPath is a value a Link reads from its upstream (To) Unit: the value at Path (a path expression: keys,
// list indexes, * and ?Key=value) of the resources of ResourceType (every resource when empty; other
// ToolchainTypes than Kubernetes/YAML have one resource, with an empty type). Name pairs it with the
// DownstreamPath of the same Name; unnamed ones pair by position.
type NamedPath struct {
	Name         string `json:"Name"`
	ResourceType string `json:"ResourceType"`
	Path         string `json:"Path"`
}

// PathExpression is where a Link writes into its downstream (From) Unit: Path of the resource ResourceType
// ResourceName (both empty for data other than Kubernetes/YAML; an empty ResourceName with a ResourceType is
// every resource of that type). Name pairs it with the UpstreamPath of the same Name; unnamed ones pair by
// position. Required says that the downstream needs the value: an upstream that does not provide it is
// reported in the Unit's LinkFindings and NeededPaths.
type PathExpression struct {
	Name         string `json:"Name"`
	ResourceType string `json:"ResourceType"`
	ResourceName string `json:"ResourceName"`
	Path         string `json:"Path"`
	Required     bool   `json:"Required"`
}
