package main

// vCenter's description of a host's vGPU profiles: EnvironmentBrowser.QueryConfigTarget
// of a cluster, asked for one of its hosts, lists the host's vGPU profiles in
// vgpuProfileInfo (7.0 U3), each with the facts the normalised scenario gives it
// (fbSizeInGib, profileSharing, profileClass, deviceVendorId: tests/lab/scenario.py
// derives them from the profile's name and the host's GPUs where the scenario says
// nothing) and the stunTimeEstimates it gives it (8.0 U2: migrationBW in Mbps,
// stunTime in seconds). A profile without estimates is listed without them, as
// vCenter does for the B- and A-series. The host's vendor device groups follow in
// vendorDeviceGroupInfo (8.0.0.1), each component with a device template: a vGPU
// (VmiopBackingInfo naming its profile), an SR-IOV NIC, or another PCI passthrough
// device. As a vCenter of the scenario's api_version would, the lab lists no profiles
// before 7.0.3.0, no device groups before 8.0.0.1 and no estimates before 8.0.2.0.

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type labEnvironmentBrowser struct {
	simulator.EnvironmentBrowser
	hosts map[types.ManagedObjectReference]*Host
	api   apiVersion
}

// installConfigTarget serves each cluster's hosts' vGPU profiles from its environment browser.
func (e *estate) installConfigTarget() {
	for _, c := range e.clusters {
		ref := c.obj.EnvironmentBrowser
		if ref == nil {
			continue
		}
		orig, ok := simulator.Map.Get(*ref).(*simulator.EnvironmentBrowser)
		if !ok {
			continue
		}
		browser := &labEnvironmentBrowser{EnvironmentBrowser: *orig, hosts: map[types.ManagedObjectReference]*Host{}, api: e.api}
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
	if spec == nil || !b.api.atLeast(7, 0, 3, 0) {
		return res
	}
	estimates := b.api.atLeast(8, 0, 2, 0)
	for _, p := range spec.VgpuProfiles {
		info := types.VirtualMachineVgpuProfileInfo{
			VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
			ProfileName:              p.Name,
			DeviceVendorId:           p.DeviceVendorID,
			FbSizeInGib:              p.FbGiB,
			ProfileSharing:           p.Sharing,
			ProfileClass:             p.Class,
		}
		for _, s := range p.StunEstimates {
			if !estimates {
				break
			}
			info.StunTimeEstimates = append(info.StunTimeEstimates, types.VirtualMachineVMotionStunTimeInfo{
				VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
				MigrationBW:              s.BandwidthMbps,
				StunTime:                 s.StunS,
			})
		}
		body.Res.Returnval.VgpuProfileInfo = append(body.Res.Returnval.VgpuProfileInfo, info)
	}
	if b.api.atLeast(8, 0, 0, 1) {
		for _, g := range spec.DeviceGroups {
			body.Res.Returnval.VendorDeviceGroupInfo = append(body.Res.Returnval.VendorDeviceGroupInfo, vendorDeviceGroup(g))
		}
	}
	return body
}

// vendorDeviceGroup is one group a host offers, as vendorDeviceGroupInfo lists it.
func vendorDeviceGroup(g DeviceGroup) types.VirtualMachineVendorDeviceGroupInfo {
	info := types.VirtualMachineVendorDeviceGroupInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: g.Name},
		DeviceGroupName:          g.Name,
		DeviceGroupDescription:   g.Description,
	}
	for i, c := range g.Components {
		template := types.VirtualDevice{Key: int32(-100 - i)}
		var device types.BaseVirtualDevice
		switch {
		case c.Type == "sriovNic":
			device = &types.VirtualSriovEthernetCard{VirtualEthernetCard: types.VirtualEthernetCard{VirtualDevice: template}}
		case c.Vgpu != nil:
			template.Backing = &types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: *c.Vgpu}
			device = &types.VirtualPCIPassthrough{VirtualDevice: template}
		default:
			device = &types.VirtualPCIPassthrough{VirtualDevice: template}
		}
		info.ComponentDeviceInfo = append(info.ComponentDeviceInfo, types.VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo{
			Type:           c.Type,
			VendorName:     c.Vendor,
			DeviceName:     c.Device,
			IsConfigurable: c.Configurable,
			Device:         device,
		})
	}
	return info
}
