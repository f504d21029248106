package main

// Clusters and standalone hosts: the compute resources, their vSphere HA and DRS
// configuration (configurationEx) and their summaries.

import (
	"fmt"
	"sort"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

func (e *estate) addComputeResources(dc *datacenterEntry) error {
	for i := range dc.spec.Clusters {
		spec := &dc.spec.Clusters[i]
		cl, err := dc.folders.HostFolder.CreateCluster(e.ctx, vcName(spec.Name), types.ClusterConfigSpecEx{})
		if err != nil {
			return fmt.Errorf("cluster %q: %v", spec.Name, err)
		}
		entry := &clusterEntry{spec: spec, dc: dc, obj: get(cl.Reference()).(*simulator.ClusterComputeResource)}
		e.clusters = append(e.clusters, entry)
		for j := range spec.Hosts {
			host := &spec.Hosts[j]
			task, err := cl.AddHost(e.ctx, connectSpec(host), true, nil, nil)
			if err := e.hostAdded(dc, entry, host, task, err); err != nil {
				return err
			}
		}
	}
	for i := range dc.spec.StandaloneHosts {
		host := &dc.spec.StandaloneHosts[i]
		task, err := dc.folders.HostFolder.AddStandaloneHost(e.ctx, connectSpec(host), true, nil, nil)
		if err := e.hostAdded(dc, nil, host, task, err); err != nil {
			return err
		}
	}
	return nil
}

func connectSpec(h *Host) types.HostConnectSpec {
	return types.HostConnectSpec{HostName: vcName(h.Name), Port: 443, UserName: "root"}
}

// hostAdded records a host once its AddHost/AddStandaloneHost task is done.
func (e *estate) hostAdded(dc *datacenterEntry, cl *clusterEntry, spec *Host, task *object.Task, err error) error {
	if err == nil {
		var info *types.TaskInfo
		info, err = task.WaitForResult(e.ctx, nil)
		if err == nil {
			ref := info.Result.(types.ManagedObjectReference)
			h := get(ref).(*simulator.HostSystem)
			entry := &hostEntry{spec: spec, obj: h, dc: dc, cluster: cl, gpuVMs: map[string][]types.ManagedObjectReference{}}
			if cl != nil {
				entry.computeResource = &cl.obj.ComputeResource
			} else {
				cr := get(*h.Parent).(*mo.ComputeResource)
				summary := e.computeSummary([]Host{*spec})
				cr.Summary = &summary
				entry.computeResource = cr
			}
			entry.pool = *entry.computeResource.ResourcePool
			e.hosts[spec.Name] = entry
			return nil
		}
	}
	return fmt.Errorf("host %q: %v", spec.Name, err)
}

// configureCluster writes HA and DRS settings and a summary that adds up the
// cluster's hosts. It runs after the VMs exist: per-VM overrides name them.
func (e *estate) configureCluster(c *clusterEntry) {
	spec := c.spec
	das := types.ClusterDasConfigInfo{
		Enabled:                    boolPtr(spec.HA.Enabled),
		VmMonitoring:               string(types.ClusterDasConfigInfoVmMonitoringStateVmMonitoringDisabled),
		HostMonitoring:             hostMonitoring(spec.HA.HostMonitoring),
		VmComponentProtecting:      hostMonitoring(spec.HA.VMCP.Enabled),
		FailoverLevel:              spec.HA.AdmissionControl.FailoverLevel,
		AdmissionControlEnabled:    boolPtr(spec.HA.AdmissionControl.Enabled),
		AdmissionControlPolicy:     e.admissionPolicy(&spec.HA.AdmissionControl),
		HBDatastoreCandidatePolicy: spec.HA.Heartbeat.Policy,
		HeartbeatDatastore:         e.datastoreRefs(spec.HA.Heartbeat.Datastores),
		DefaultVmSettings: &types.ClusterDasVmSettings{
			RestartPriority:        spec.HA.DefaultRestartPriority,
			RestartPriorityTimeout: 600,
			IsolationResponse:      spec.HA.IsolationResponse,
			VmComponentProtectionSettings: &types.ClusterVmComponentProtectionSettings{
				VmStorageProtectionForAPD: spec.HA.VMCP.APD,
				VmStorageProtectionForPDL: spec.HA.VMCP.PDL,
			},
		},
	}
	optionKeys := make([]string, 0, len(spec.HA.Options))
	for key := range spec.HA.Options {
		optionKeys = append(optionKeys, key)
	}
	sort.Strings(optionKeys)
	for _, key := range optionKeys {
		das.Option = append(das.Option, &types.OptionValue{Key: key, Value: spec.HA.Options[key]})
	}
	inCluster := map[string]bool{}
	for _, h := range spec.Hosts {
		inCluster[h.Name] = true
	}
	var overrides []types.ClusterDasVmConfigInfo
	for i := range c.dc.spec.VMs {
		vm := &c.dc.spec.VMs[i]
		if inCluster[vm.Host] && (vm.RestartPriority != nil || vm.IsolationResponse != nil) {
			settings := &types.ClusterDasVmSettings{}
			if vm.RestartPriority != nil {
				settings.RestartPriority = *vm.RestartPriority
			}
			if vm.IsolationResponse != nil {
				settings.IsolationResponse = *vm.IsolationResponse
			}
			overrides = append(overrides, types.ClusterDasVmConfigInfo{
				Key:         e.vms[vm.Name].Self,
				DasSettings: settings,
			})
		}
	}
	drs := types.ClusterDrsConfigInfo{
		Enabled:                   boolPtr(spec.DRS.Enabled),
		EnableVmBehaviorOverrides: boolPtr(true),
		DefaultVmBehavior:         types.DrsBehavior(spec.DRS.Automation),
		VmotionRate:               3,
	}
	keys := make([]string, 0, len(spec.DRS.Options))
	for key := range spec.DRS.Options {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		drs.Option = append(drs.Option, &types.OptionValue{Key: key, Value: spec.DRS.Options[key]})
	}
	cfg := c.obj.ConfigurationEx.(*types.ClusterConfigInfoEx)
	cfg.DasConfig = das
	cfg.DasVmConfig = overrides
	cfg.DrsConfig = drs
	cfg.Group, cfg.Rule = e.drsRules(spec)
	// The pre-5.0 `configuration` property carries the same settings.
	c.obj.Configuration = types.ClusterConfigInfo{DasConfig: das, DasVmConfig: overrides, DrsConfig: drs}

	c.obj.ConfigIssue = configIssues(spec.ConfigIssues)
	for i := range spec.Hosts {
		h := e.hosts[spec.Hosts[i].Name].obj
		h.ConfigIssue = configIssues(spec.Hosts[i].ConfigIssues)
		if state := spec.Hosts[i].HAState; state != nil {
			h.Runtime.DasHostState = &types.ClusterDasFdmHostState{State: *state}
		}
	}

	summary := c.obj.Summary.(*types.ClusterComputeResourceSummary)
	summary.ComputeResourceSummary = e.computeSummary(spec.Hosts)
	if spec.EVCMode != nil {
		summary.CurrentEVCModeKey = *spec.EVCMode
	}
	summary.CurrentFailoverLevel = 0
	if spec.HA.Enabled {
		summary.CurrentFailoverLevel = spec.HA.AdmissionControl.FailoverLevel
	}
}

// drsRules builds the cluster's DRS groups and rules, VMs and hosts by reference.
func (e *estate) drsRules(spec *Cluster) ([]types.BaseClusterGroupInfo, []types.BaseClusterRuleInfo) {
	var groups []types.BaseClusterGroupInfo
	for _, g := range spec.Groups {
		info := types.ClusterGroupInfo{Name: g.Name, UserCreated: boolPtr(true)}
		if len(g.Hosts) > 0 {
			var refs []types.ManagedObjectReference
			for _, name := range g.Hosts {
				refs = append(refs, e.hosts[name].obj.Self)
			}
			groups = append(groups, &types.ClusterHostGroup{ClusterGroupInfo: info, Host: refs})
			continue
		}
		groups = append(groups, &types.ClusterVmGroup{ClusterGroupInfo: info, Vm: e.vmRefs(g.VMs)})
	}
	var rules []types.BaseClusterRuleInfo
	for i, r := range spec.Rules {
		info := types.ClusterRuleInfo{
			Key:          int32(i + 1),
			Status:       types.ManagedEntityStatusGreen,
			Enabled:      boolPtr(r.Enabled),
			Name:         r.Name,
			Mandatory:    boolPtr(r.Mandatory),
			UserCreated:  boolPtr(true),
			InCompliance: boolPtr(true),
			RuleUuid:     uuidFrom("rule", spec.Name+"/"+r.Name),
		}
		switch r.Kind {
		case "vm-host":
			rules = append(rules, &types.ClusterVmHostRuleInfo{
				ClusterRuleInfo:         info,
				VmGroupName:             r.VMGroup,
				AffineHostGroupName:     r.AffineHostGroup,
				AntiAffineHostGroupName: r.AntiAffineHostGroup,
			})
		case "affinity":
			rules = append(rules, &types.ClusterAffinityRuleSpec{ClusterRuleInfo: info, Vm: e.vmRefs(r.VMs)})
		default:
			rules = append(rules, &types.ClusterAntiAffinityRuleSpec{ClusterRuleInfo: info, Vm: e.vmRefs(r.VMs)})
		}
	}
	return groups, rules
}

func (e *estate) vmRefs(names []string) []types.ManagedObjectReference {
	var refs []types.ManagedObjectReference
	for _, name := range names {
		refs = append(refs, e.vms[name].Self)
	}
	return refs
}

func hostMonitoring(on bool) string {
	if on {
		return string(types.ClusterDasConfigInfoServiceStateEnabled)
	}
	return string(types.ClusterDasConfigInfoServiceStateDisabled)
}

// admissionPolicy maps the scenario's policy names to the API's classes; a
// cluster keeps its policy while admission control is switched off, as vCenter does.
func (e *estate) admissionPolicy(ac *AdmissionControl) types.BaseClusterDasAdmissionControlPolicy {
	if ac.Policy == nil {
		return nil
	}
	switch *ac.Policy {
	case "slots":
		return &types.ClusterFailoverLevelAdmissionControlPolicy{FailoverLevel: ac.FailoverLevel}
	case "percent":
		return &types.ClusterFailoverResourcesAdmissionControlPolicy{
			CpuFailoverResourcesPercent:    ac.CPUPercent,
			MemoryFailoverResourcesPercent: ac.MemoryPercent,
			FailoverLevel:                  ac.FailoverLevel,
			AutoComputePercentages:         boolPtr(false),
		}
	case "dedicated-hosts":
		var refs []types.ManagedObjectReference
		for _, name := range ac.FailoverHosts {
			refs = append(refs, e.hosts[name].obj.Self)
		}
		return &types.ClusterFailoverHostAdmissionControlPolicy{FailoverHosts: refs, FailoverLevel: int32(len(refs))}
	}
	return nil
}

// computeSummary adds up hosts as ComputeResource.summary does: effective
// resources count only connected hosts that are not in maintenance mode.
func (e *estate) computeSummary(hosts []Host) types.ComputeResourceSummary {
	var s types.ComputeResourceSummary
	s.OverallStatus = types.ManagedEntityStatusGreen
	for i := range hosts {
		h := &hosts[i]
		mhz := h.CPUMhz * int32(h.CPUCores)
		s.TotalCpu += mhz
		s.TotalMemory += h.MemoryGB << 30
		s.NumCpuCores += int16(h.CPUCores)
		s.NumCpuThreads += int16(2 * h.CPUCores)
		s.NumHosts++
		if h.Connection == "connected" && !h.Maintenance {
			s.NumEffectiveHosts++
			s.EffectiveCpu += mhz
			s.EffectiveMemory += h.MemoryGB << 10 // MB
		} else {
			s.OverallStatus = types.ManagedEntityStatusYellow
		}
	}
	return s
}

func (e *estate) datastoreRefs(names []string) []types.ManagedObjectReference {
	var refs []types.ManagedObjectReference
	for _, name := range names {
		refs = append(refs, e.datastores[name].Self)
	}
	return refs
}

// configIssues builds the events the scenario names, as vCenter keeps them open.
func configIssues(specs []ConfigIssue) []types.BaseEvent {
	var events []types.BaseEvent
	for _, spec := range specs {
		base := types.Event{FullFormattedMessage: spec.Message, CreatedTime: time.Unix(0, 0).UTC()}
		var event types.BaseEvent
		switch spec.Kind {
		case "HostNoRedundantManagementNetworkEvent":
			event = &types.HostNoRedundantManagementNetworkEvent{HostDasEvent: types.HostDasEvent{HostEvent: types.HostEvent{Event: base}}}
		case "HostDasErrorEvent":
			event = &types.HostDasErrorEvent{HostEvent: types.HostEvent{Event: base}}
		case "DasHostFailedEvent":
			event = &types.DasHostFailedEvent{ClusterEvent: types.ClusterEvent{Event: base}}
		case "InsufficientFailoverResourcesEvent":
			event = &types.InsufficientFailoverResourcesEvent{ClusterEvent: types.ClusterEvent{Event: base}}
		case "ClusterOvercommittedEvent":
			event = &types.ClusterOvercommittedEvent{ClusterEvent: types.ClusterEvent{Event: base}}
		default:
			panic("configIssues: unknown kind " + spec.Kind) // scenario.py refuses it first
		}
		events = append(events, event)
	}
	return events
}
