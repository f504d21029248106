package main

// vCenter's vGPU stun time estimates (8.0 U2): EnvironmentBrowser.QueryConfigTarget
// of a cluster, asked for one of its hosts, lists the host's vGPU profiles in
// vgpuProfileInfo, each with the stunTimeEstimates the scenario gives it
// (migrationBW in Mbps, stunTime in seconds). A profile without estimates is
// listed without them, as vCenter does for the B- and A-series.

import (
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type labEnvironmentBrowser struct {
	simulator.EnvironmentBrowser
	hosts map[types.ManagedObjectReference]*Host
}

// installStunEstimates serves each cluster's hosts' vGPU profiles from its environment browser.
func (e *estate) installStunEstimates() {
	for _, c := range e.clusters {
		ref := c.obj.EnvironmentBrowser
		if ref == nil {
			continue
		}
		orig, ok := simulator.Map.Get(*ref).(*simulator.EnvironmentBrowser)
		if !ok {
			continue
		}
		browser := &labEnvironmentBrowser{EnvironmentBrowser: *orig, hosts: map[types.ManagedObjectReference]*Host{}}
		for i := range c.spec.Hosts {
			h := e.hosts[c.spec.Hosts[i].Name]
			browser.hosts[h.obj.Self] = h.spec
		}
		simulator.Map.Put(browser)
	}
}

func (b *labEnvironmentBrowser) QueryConfigTarget(ctx *simulator.Context, req *types.QueryConfigTarget) soap.HasFault {
	res := b.EnvironmentBrowser.QueryConfigTarget(ctx, req)
	body, ok := res.(*methods.QueryConfigTargetBody)
	if !ok || req.Host == nil || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	spec := b.hosts[*req.Host]
	if spec == nil {
		return res
	}
	for _, p := range spec.VgpuProfiles {
		info := types.VirtualMachineVgpuProfileInfo{
			VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
			ProfileName:              p.Name,
			DeviceVendorId:           0x10de,
			ProfileSharing:           "timeSliced",
			ProfileClass:             profileClass(p.Name),
		}
		for _, s := range p.StunEstimates {
			info.StunTimeEstimates = append(info.StunTimeEstimates, types.VirtualMachineVMotionStunTimeInfo{
				VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
				MigrationBW:              s.BandwidthMbps,
				StunTime:                 s.StunS,
			})
		}
		body.Res.Returnval.VgpuProfileInfo = append(body.Res.Returnval.VgpuProfileInfo, info)
	}
	return body
}

// profileClass is "compute" for a C-series profile, "quadro" otherwise.
func profileClass(name string) string {
	if strings.HasSuffix(strings.ToLower(name), "c") {
		return "compute"
	}
	return "quadro"
}
