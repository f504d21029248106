package main

// A host's installed software: HostImageConfigManager.fetchSoftwarePackages (esxcli
// software vib get), served by one manager per host, referenced from the host's
// configManager.imageConfigManager (imageConfigManager-<host id> for a vCenter's hosts;
// ha-image-config-manager, the ESX model's own, for a standalone host).
//
// The vSphere API requires Host.Config.Image for the call, which the Read-only role
// lacks: unless the scenario's role grants it, the call answers NoPermission with that
// privilegeId, as vCenter does. With it, the packages are a few of ESXi's own VIBs of the
// host's version and build and, on a host with a vgpu_manager, NVIDIA's vGPU manager VIB
// and the NVIDIA GPU management daemon's VIB (nvdgpumgmtdaemon) of the same driver
// version. A host that is not connected answers HostNotConnected.

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const imagePrivilege = "Host.Config.Image"

type labImageConfigManager struct {
	Self    types.ManagedObjectReference
	host    *hostEntry
	granted bool
}

func (m *labImageConfigManager) Reference() types.ManagedObjectReference { return m.Self }

// installSoftware gives every host its own image config manager.
func (e *estate) installSoftware() {
	granted := false
	for _, p := range e.scenario.Role.Privileges {
		if p == imagePrivilege {
			granted = true
		}
	}
	for _, h := range e.hosts {
		ref := types.ManagedObjectReference{Type: "HostImageConfigManager", Value: "imageConfigManager-" + h.obj.Self.Value}
		if e.esx && h.obj.ConfigManager.ImageConfigManager != nil {
			ref = *h.obj.ConfigManager.ImageConfigManager
		}
		simulator.Map.Put(&labImageConfigManager{Self: ref, host: h, granted: granted})
		h.obj.ConfigManager.ImageConfigManager = &ref
	}
}

func (m *labImageConfigManager) FetchSoftwarePackages(req *types.FetchSoftwarePackages) soap.HasFault {
	body := &methods.FetchSoftwarePackagesBody{}
	if !m.granted {
		body.Fault_ = simulator.Fault("Permission to perform this operation was denied.",
			&types.NoPermission{Object: m.host.obj.Self, PrivilegeId: imagePrivilege})
		return body
	}
	if !m.host.connected() {
		body.Fault_ = simulator.Fault(fmt.Sprintf("host %s is %s", m.host.spec.Name, m.host.spec.Connection),
			&types.HostNotConnected{})
		return body
	}
	body.Res = &types.FetchSoftwarePackagesResponse{Returnval: softwarePackages(m.host.spec)}
	return body
}

// softwarePackages lists ESXi's own VIBs and, with a vgpu_manager, NVIDIA's two.
func softwarePackages(spec *Host) []types.SoftwarePackage {
	created := epoch
	pkg := func(name, version, vendor, level, summary string) types.SoftwarePackage {
		return types.SoftwarePackage{
			Name:            name,
			Version:         version,
			Type:            "bootbank",
			Vendor:          vendor,
			AcceptanceLevel: level,
			Summary:         summary,
			Description:     summary,
			CreationDate:    &created,
		}
	}
	esxi := fmt.Sprintf("%s-0.0.%s", spec.Version, spec.Build)
	packages := []types.SoftwarePackage{
		pkg("esx-base", esxi, "VMware", "VMwareCertified", "ESXi base system"),
		pkg("esx-update", esxi, "VMware", "VMwareCertified", "ESXi update agent"),
		pkg("vsan", esxi, "VMware", "VMwareCertified", "vSAN"),
		pkg("native-misc-drivers", esxi, "VMware", "VMwareCertified", "ESXi native drivers"),
	}
	if m := spec.VgpuManager; m != nil {
		packages = append(packages,
			pkg(m.VIB, m.VIBVersion, "NVD", "VMwareAccepted", "NVIDIA vGPU Manager (host driver) for VMware ESXi"),
			pkg("nvdgpumgmtdaemon", m.Version+"-1OEM.700.1.0.15843807", "NVD", "VMwareAccepted",
				"NVIDIA GPU monitoring and management daemon"),
		)
	}
	return packages
}
