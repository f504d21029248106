package main

// vSphere 9.0's DirectPathProfileManager: ServiceContent.directPathProfileManager, served
// only by a vCenter whose api_version is 9.0.0.0 or later, answers QueryCapacity
// (DirectPathProfileManagerQueryCapacity) for a host with one result per query spec,
// in their order:
//
//   - a spec by device configuration naming a vGPU profile (VmiopDirectPathConfig) that
//     the host offers and the scenario gives counts: a CapacityInfo with those counts
//     (max, consumed, remaining, unusedReservation) and the profile it counted;
//   - a profile the scenario marks unknown (every undeclared profile is, with
//     NotSupported): a CapacityUnknown with the spec and those faults;
//   - a profile the host does not offer, any other device configuration, or a spec by
//     id or by name (the lab keeps no DirectPath profiles of its own): a CapacityUnknown
//     with NotFound;
//   - a host that is not connected: CapacityUnknown with InvalidState for every spec.
//
// A cluster as the target, or a host the lab does not serve, is InvalidArgument.

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type labDirectPathProfileManager struct {
	Self  types.ManagedObjectReference
	hosts map[types.ManagedObjectReference]*hostEntry
}

func (m *labDirectPathProfileManager) Reference() types.ManagedObjectReference { return m.Self }

type directPathQueryCapacityBody struct {
	Req    *types.DirectPathProfileManagerQueryCapacity         `xml:"urn:vim25 DirectPathProfileManagerQueryCapacity,omitempty"`
	Res    *types.DirectPathProfileManagerQueryCapacityResponse `xml:"urn:vim25 DirectPathProfileManagerQueryCapacityResponse,omitempty"`
	Fault_ *soap.Fault                                          `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *directPathQueryCapacityBody) Fault() *soap.Fault { return b.Fault_ }

// installDirectPathProfiles adds the manager to the service content of a vSphere 9 vCenter.
func (e *estate) installDirectPathProfiles() {
	if e.esx || !e.api.atLeast(9, 0, 0, 0) {
		return
	}
	m := &labDirectPathProfileManager{
		Self:  types.ManagedObjectReference{Type: "DirectPathProfileManager", Value: "DirectPathProfileManager"},
		hosts: map[types.ManagedObjectReference]*hostEntry{},
	}
	for _, h := range e.hosts {
		m.hosts[h.obj.Self] = h
	}
	simulator.Map.Put(m)
	si := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance)
	si.Content.DirectPathProfileManager = &m.Self
	e.model.ServiceContent.DirectPathProfileManager = &m.Self
}

func (m *labDirectPathProfileManager) DirectPathProfileManagerQueryCapacity(req *types.DirectPathProfileManagerQueryCapacity) soap.HasFault {
	body := &directPathQueryCapacityBody{}
	target, ok := req.Target.(*types.DirectPathProfileManagerTargetHost)
	if !ok {
		body.Fault_ = simulator.Fault("the lab answers QueryCapacity for a host only", &types.InvalidArgument{InvalidProperty: "target"})
		return body
	}
	h := m.hosts[target.Host]
	if h == nil {
		body.Fault_ = simulator.Fault(fmt.Sprintf("no host %s", target.Host.Value), &types.InvalidArgument{InvalidProperty: "target.host"})
		return body
	}
	res := &types.DirectPathProfileManagerQueryCapacityResponse{}
	for _, spec := range req.QuerySpec {
		res.Returnval = append(res.Returnval, capacityOf(h, spec))
	}
	body.Res = res
	return body
}

// capacityOf answers one query spec for host h.
func capacityOf(h *hostEntry, spec types.BaseDirectPathProfileManagerCapacityQuerySpec) types.BaseDirectPathProfileManagerCapacityResult {
	if !h.connected() {
		return capacityUnknown(spec, "InvalidState", fmt.Sprintf("host %s is %s", h.spec.Name, h.spec.Connection))
	}
	byConfig, ok := spec.(*types.DirectPathProfileManagerCapacityQueryByDeviceConfig)
	if !ok {
		return capacityUnknown(spec, "NotFound", "no such DirectPath profile")
	}
	vmiop, ok := byConfig.DeviceConfig.(*types.DirectPathProfileManagerVmiopDirectPathConfig)
	if !ok {
		return capacityUnknown(spec, "NotFound", "not a vGPU device configuration")
	}
	for i := range h.spec.VgpuProfiles {
		p := &h.spec.VgpuProfiles[i]
		if p.Name != vmiop.VgpuProfile {
			continue
		}
		c := p.Capacity
		if c == nil {
			return capacityUnknown(spec, "NotSupported", "the scenario declares no capacity for the profile")
		}
		if len(c.Unknown) > 0 {
			return capacityUnknown(spec, c.Unknown[0], "the scenario declares the capacity unknown", c.Unknown[1:]...)
		}
		return &types.DirectPathProfileManagerCapacityInfo{
			Profile: types.DirectPathProfileInfo{
				Id:           p.Name,
				Name:         p.Name,
				VendorName:   "NVIDIA",
				DeviceConfig: &types.DirectPathProfileManagerVmiopDirectPathConfig{VgpuProfile: p.Name},
			},
			Consumed:          c.Consumed,
			Remaining:         c.Remaining,
			Max:               c.Max,
			UnusedReservation: c.UnusedReservation,
		}
	}
	return capacityUnknown(spec, "NotFound", fmt.Sprintf("host %s offers no vGPU profile %s", h.spec.Name, vmiop.VgpuProfile))
}

func capacityUnknown(spec types.BaseDirectPathProfileManagerCapacityQuerySpec, fault, message string, more ...string) *types.DirectPathProfileManagerCapacityUnknown {
	unknown := &types.DirectPathProfileManagerCapacityUnknown{QuerySpec: spec}
	for _, name := range append([]string{fault}, more...) {
		unknown.FaultList = append(unknown.FaultList, types.LocalizedMethodFault{
			Fault:            capacityFault(name),
			LocalizedMessage: message,
		})
	}
	return unknown
}

// capacityFault is one of the faults a scenario may name (CAPACITY_FAULTS in scenario.py).
func capacityFault(name string) types.BaseMethodFault {
	switch name {
	case "InvalidState":
		return &types.InvalidState{}
	case "NotFound":
		return &types.NotFound{}
	case "InvalidArgument":
		return &types.InvalidArgument{}
	default:
		return &types.NotSupported{}
	}
}
