package main

// Host properties: summary, hardware (PCI devices), GPU configuration (passthrough,
// graphics, vGPU profiles) and the vMotion network. Storage is in storage.go.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/types"
)

// Every host carries a few ordinary PCI devices besides its GPUs, as a real one
// does; among them a display-class BMC controller that is not a GPU.
var basePciDevices = []struct {
	id, vendorName, deviceName string
	class, vendor, device      int
}{
	{"0000:00:00.0", "Intel Corporation", "Ice Lake Memory Map/VT-d", 0x0600, 0x8086, 0x09a2},
	{"0000:03:00.0", "Matrox Electronics Systems Ltd.", "Integrated Matrox G200eW3 Graphics Controller", 0x0300, 0x102b, 0x0536},
	{"0000:31:00.0", "Broadcom Inc. and subsidiaries", "BCM57414 NetXtreme-E 10Gb/25Gb RDMA Ethernet Controller", 0x0200, 0x14e4, 0x16d7},
	{"0000:31:00.1", "Broadcom Inc. and subsidiaries", "BCM57414 NetXtreme-E 10Gb/25Gb RDMA Ethernet Controller", 0x0200, 0x14e4, 0x16d7},
}

const dellVendorID = 0x1028

// configureHost writes a host's properties. A host that is not connected keeps
// its summary but serves no config and no hardware, as vCenter does.
func (e *estate) configureHost(h *hostEntry) {
	spec := h.spec
	obj := h.obj
	product := esxProduct(spec)

	obj.Summary.Config.Name = vcName(spec.Name)
	obj.Summary.Config.Port = 443
	obj.Summary.Config.Product = product
	obj.Summary.Hardware = &types.HostHardwareSummary{
		Vendor:        spec.Vendor,
		Model:         spec.Model,
		Uuid:          uuidFrom("host", spec.Name),
		MemorySize:    spec.MemoryGB << 30,
		CpuModel:      "Intel(R) Xeon(R) Gold 6448Y",
		CpuMhz:        spec.CPUMhz,
		NumCpuPkgs:    2,
		NumCpuCores:   int16(spec.CPUCores),
		NumCpuThreads: int16(2 * spec.CPUCores),
		NumNics:       int32(2 + len(spec.Vmotion)),
		NumHBAs:       int32(len(spec.Adapters)),
	}
	boot := epoch
	obj.Runtime.BootTime = &boot
	obj.Runtime.InMaintenanceMode = spec.Maintenance
	obj.Runtime.ConnectionState = types.HostSystemConnectionState(spec.Connection)
	obj.Summary.OverallStatus = types.ManagedEntityStatusGreen
	if spec.MaxEVCMode != nil {
		obj.Summary.MaxEVCModeKey = *spec.MaxEVCMode
	}
	switch spec.Connection {
	case "disconnected":
		obj.Runtime.PowerState = types.HostSystemPowerStateUnknown
		obj.Summary.OverallStatus = types.ManagedEntityStatusGray
	case "notResponding":
		obj.Runtime.PowerState = types.HostSystemPowerStateUnknown
		obj.Summary.OverallStatus = types.ManagedEntityStatusRed
	}
	obj.OverallStatus = obj.Summary.OverallStatus
	if !h.connected() {
		obj.Config = nil
		obj.Hardware = nil
		return
	}

	obj.Hardware.SystemInfo = types.HostSystemInfo{
		Vendor:       spec.Vendor,
		Model:        spec.Model,
		Uuid:         obj.Summary.Hardware.Uuid,
		SerialNumber: strings.ToUpper(hexDigest("serial", spec.Name)[:7]),
	}
	obj.Hardware.CpuInfo = types.HostCpuInfo{
		NumCpuPackages: 2,
		NumCpuCores:    int16(spec.CPUCores),
		NumCpuThreads:  int16(2 * spec.CPUCores),
		Hz:             int64(spec.CPUMhz) * 1000 * 1000,
	}
	obj.Hardware.MemorySize = spec.MemoryGB << 30
	// A BIOS of its own: the simulator's hosts share one HostBIOSInfo.
	released, err := time.Parse("2006-01-02", spec.BIOS.ReleaseDate)
	if err != nil {
		panic(fmt.Sprintf("host %s: bios release_date %q: %v", spec.Name, spec.BIOS.ReleaseDate, err))
	}
	obj.Hardware.BiosInfo = &types.HostBIOSInfo{
		BiosVersion: spec.BIOS.Version,
		ReleaseDate: &released,
		Vendor:      spec.Vendor,
	}
	obj.Hardware.PciDevice = pciDevices(spec)

	cfg := obj.Config
	cfg.Host = obj.Self
	cfg.Product = *product
	cfg.PciPassthruInfo = passthruInfo(spec, e.api.atLeast(8, 0, 0, 0))
	cfg.GraphicsInfo = e.graphicsInfo(h)
	cfg.GraphicsConfig = graphicsConfig(spec)
	cfg.SharedPassthruGpuTypes = nil
	cfg.SharedGpuCapabilities = nil
	for _, p := range spec.VgpuProfiles {
		cfg.SharedPassthruGpuTypes = append(cfg.SharedPassthruGpuTypes, p.Name)
		cfg.SharedGpuCapabilities = append(cfg.SharedGpuCapabilities, types.HostSharedGpuCapabilities{
			Vgpu:                    p.Name,
			DiskSnapshotSupported:   true,
			MemorySnapshotSupported: p.Suspend,
			SuspendSupported:        p.Suspend,
			MigrateSupported:        p.Migrate,
		})
	}
	configureVmotion(spec, cfg)
	e.configureStorage(h)
}

func esxProduct(h *Host) *types.AboutInfo {
	return &types.AboutInfo{
		Name:                  "VMware ESXi",
		FullName:              fmt.Sprintf("VMware ESXi %s build-%s", h.Version, h.Build),
		Vendor:                "VMware, Inc.",
		Version:               h.Version,
		Build:                 h.Build,
		LocaleVersion:         "INTL",
		LocaleBuild:           "000",
		OsType:                "vmnix-x86",
		ProductLineId:         "embeddedEsx",
		ApiType:               "HostAgent",
		ApiVersion:            hostAPIVersion(h.Version),
		LicenseProductName:    "VMware ESX Server",
		LicenseProductVersion: majorMinor(h.Version),
	}
}

// hostAPIVersion pads a product version to the four-part API version (8.0.3 -> 8.0.3.0).
func hostAPIVersion(version string) string {
	parts := strings.Split(version, ".")
	for len(parts) < 4 {
		parts = append(parts, "0")
	}
	return strings.Join(parts[:4], ".")
}

// pciDevices lists the host's PCI devices with ids as signed 16-bit values.
func pciDevices(h *Host) []types.HostPciDevice {
	gpuAt := map[string]bool{}
	for _, g := range h.GPUs {
		gpuAt[g.PciID] = true
	}
	var out []types.HostPciDevice
	for _, d := range basePciDevices {
		if gpuAt[d.id] {
			continue // the scenario put a GPU at this address
		}
		out = append(out, pciDevice(d.id, d.class, d.vendor, d.device, dellVendorID, d.device, d.vendorName, d.deviceName))
	}
	for _, g := range h.GPUs {
		out = append(out, pciDevice(g.PciID, g.ClassID, g.VendorID, g.DeviceID, g.SubVendorID, g.SubDeviceID, g.VendorName, g.DeviceName))
	}
	for _, g := range h.GPUs {
		if !g.SRIOV.Listed {
			continue
		}
		for _, id := range virtualFunctions(g.PciID, int(g.SRIOV.VFs)) {
			// A virtual function: the GPU's vendor, device and name, subsystem device 0x0000.
			out = append(out, pciDevice(id, g.ClassID, g.VendorID, g.DeviceID, g.SubVendorID, 0, g.VendorName, g.DeviceName))
		}
	}
	return out
}

// virtualFunctions gives the PCI ids of a GPU's first n virtual functions: on the
// GPU's bus from function 4 of its slot on (0000:3b:00.4 ... 0000:3b:02.3 for 16).
func virtualFunctions(pf string, n int) []string {
	bus, slot, _ := pciAddress(pf)
	segment := strings.SplitN(pf, ":", 2)[0]
	var out []string
	for i := 0; i < n; i++ {
		offset := int(slot)*8 + 4 + i
		out = append(out, fmt.Sprintf("%s:%02x:%02x.%d", segment, bus, offset/8, offset%8))
	}
	return out
}

func pciDevice(id string, class, vendor, device, subVendor, subDevice int, vendorName, deviceName string) types.HostPciDevice {
	bus, slot, function := pciAddress(id)
	return types.HostPciDevice{
		Id:          id,
		ClassId:     signed16(class),
		Bus:         bus,
		Slot:        slot,
		Function:    function,
		VendorId:    signed16(vendor),
		SubVendorId: signed16(subVendor),
		VendorName:  vendorName,
		DeviceId:    signed16(device),
		SubDeviceId: signed16(subDevice),
		DeviceName:  deviceName,
	}
}

// pciAddress splits 0000:3b:00.0 into bus 0x3b, slot 0 and function 0.
func pciAddress(id string) (bus, slot, function byte) {
	parts := strings.FieldsFunc(id, func(r rune) bool { return r == ':' || r == '.' })
	if len(parts) != 4 {
		return 0, 0, 0
	}
	b, _ := strconv.ParseUint(parts[1], 16, 8)
	s, _ := strconv.ParseUint(parts[2], 16, 8)
	f, _ := strconv.ParseUint(parts[3], 16, 8)
	return byte(b), byte(s), byte(f)
}

// passthruInfo covers every PCI device, as config.pciPassthruInfo does on ESXi.
// With labels (API 8.0 and later), a GPU's hardware label is served too.
func passthruInfo(h *Host, labels bool) []types.BaseHostPciPassthruInfo {
	var out []types.BaseHostPciPassthruInfo
	for _, d := range pciDevices(h) {
		info := &types.HostPciPassthruInfo{Id: d.Id, DependentDevice: d.Id}
		var sriov *SRIOV
		for i := range h.GPUs {
			g := &h.GPUs[i]
			if g.PciID == d.Id {
				info.PassthruCapable = g.Passthrough.Capable
				info.PassthruEnabled = g.Passthrough.Enabled
				info.PassthruActive = g.Passthrough.Active
				if labels {
					info.HardwareLabel = g.Passthrough.HardwareLabel
				}
				if g.SRIOV.Reported {
					sriov = &g.SRIOV
				}
			}
		}
		if d.ClassId == 0x0200 { // network controllers can be passed through
			info.PassthruCapable = true
		}
		if sriov != nil {
			// An SR-IOV capable device is described by the HostSriovInfo subclass.
			out = append(out, &types.HostSriovInfo{
				HostPciPassthruInfo:         *info,
				SriovCapable:                sriov.Capable,
				SriovEnabled:                sriov.Enabled,
				SriovActive:                 sriov.Active,
				NumVirtualFunctionRequested: sriov.VFs,
				NumVirtualFunction:          sriov.VFs,
				MaxVirtualFunctionSupported: sriov.MaxVFs,
			})
			continue
		}
		out = append(out, info)
	}
	return out
}

func (e *estate) graphicsInfo(h *hostEntry) []types.HostGraphicsInfo {
	var out []types.HostGraphicsInfo
	for _, g := range h.spec.GPUs {
		if g.GraphicsType == "none" {
			continue
		}
		info := types.HostGraphicsInfo{
			DeviceName:     g.DeviceName,
			VendorName:     g.VendorName,
			PciId:          g.PciID,
			GraphicsType:   g.GraphicsType,
			MemorySizeInKB: g.MemoryMB * 1024,
			Vm:             h.gpuVMs[g.PciID],
		}
		// vgpuMode is an 8.0 U3 field: an older vCenter does not send it.
		if g.VgpuMode != nil && e.api.atLeast(8, 0, 3, 0) {
			info.VgpuMode = *g.VgpuMode
		}
		out = append(out, info)
	}
	return out
}

func graphicsConfig(h *Host) *types.HostGraphicsConfig {
	cfg := &types.HostGraphicsConfig{
		HostDefaultGraphicsType:        h.Graphics.DefaultType,
		SharedPassthruAssignmentPolicy: h.Graphics.AssignmentPolicy,
	}
	for _, g := range h.GPUs {
		if g.DeviceType != "none" {
			cfg.DeviceType = append(cfg.DeviceType, types.HostGraphicsConfigDeviceType{DeviceId: g.PciID, GraphicsType: g.DeviceType})
		}
	}
	return cfg
}

// configureVmotion gives each vMotion VMkernel adapter vmkN a port group
// "vMotion-vmkN" on the standard switch "vSwitch-vmotion", with one uplink per
// adapter at the adapter's link speed (active for its own port group, standby
// for the others, as a multi-NIC vMotion set-up is teamed), and selects the
// adapters for vMotion in the VirtualNicManager. An adapter with switch
// "distributed" sits instead on a port of the distributed switch "dvs-vmotion",
// whose uplinks on the host are its proxy switch's pnics. A speed of 0 is an
// uplink whose link is down. vmk0 stays the management adapter on vSwitch0 and
// is a vMotion candidate that is not selected.
func configureVmotion(h *Host, cfg *types.HostConfigInfo) {
	net := cfg.Network
	vmk0 := net.Vnic[0]
	vnics := []types.HostVirtualNic{vmk0}
	var standard, distributed []VmotionVnic
	for _, v := range h.Vmotion {
		if v.Switch == "distributed" {
			distributed = append(distributed, v)
		} else {
			standard = append(standard, v)
		}
	}
	next := 2 // vmnic0 and vmnic1 are the management uplinks
	addPnics := func(nics []VmotionVnic) (devices, keys []string) {
		for _, v := range nics {
			device := fmt.Sprintf("vmnic%d", next)
			pnic := types.PhysicalNic{
				Key:    "key-vim.host.PhysicalNic-" + device,
				Device: device,
				Pci:    fmt.Sprintf("0000:4b:00.%d", next-2),
				Driver: "bnxtnet",
				Mac:    macFrom("pnic", h.Name, device),
			}
			if v.UplinkSpeedMbps > 0 {
				pnic.LinkSpeed = &types.PhysicalNicLinkInfo{SpeedMb: v.UplinkSpeedMbps, Duplex: true}
				pnic.Spec.LinkSpeed = &types.PhysicalNicLinkInfo{SpeedMb: v.UplinkSpeedMbps, Duplex: true}
			}
			net.Pnic = append(net.Pnic, pnic)
			devices = append(devices, device)
			keys = append(keys, pnic.Key)
			next++
		}
		return devices, keys
	}
	vnicOf := func(v VmotionVnic, pg string) types.HostVirtualNic {
		return types.HostVirtualNic{
			Device:    v.Device,
			Key:       "key-vim.host.VirtualNic-" + v.Device,
			Portgroup: pg,
			Spec: types.HostVirtualNicSpec{
				Ip:                  &types.HostIpConfig{IpAddress: v.IP, SubnetMask: "255.255.255.0"},
				Mac:                 macFrom("vmk", h.Name, v.Device),
				Portgroup:           pg,
				Mtu:                 9000,
				TsoEnabled:          boolPtr(true),
				NetStackInstanceKey: "defaultTcpipStack",
			},
		}
	}
	if len(standard) > 0 {
		const vswitch = "vSwitch-vmotion"
		vswitchKey := "key-vim.host.VirtualSwitch-" + vswitch
		uplinks, pnicKeys := addPnics(standard)
		var pgKeys []string
		for i, v := range standard {
			pg := "vMotion-" + v.Device
			pgKeys = append(pgKeys, "key-vim.host.PortGroup-"+pg)
			var standby []string
			for j, u := range uplinks {
				if j != i {
					standby = append(standby, u)
				}
			}
			policy := types.HostNetworkPolicy{NicTeaming: &types.HostNicTeamingPolicy{
				Policy:   "failover_explicit",
				NicOrder: &types.HostNicOrderPolicy{ActiveNic: []string{uplinks[i]}, StandbyNic: standby},
			}}
			net.Portgroup = append(net.Portgroup, types.HostPortGroup{
				Key:            "key-vim.host.PortGroup-" + pg,
				Vswitch:        vswitchKey,
				ComputedPolicy: policy,
				Spec:           types.HostPortGroupSpec{Name: pg, VswitchName: vswitch, Policy: policy},
			})
			vnic := vnicOf(v, pg)
			net.Vnic = append(net.Vnic, vnic)
			vnics = append(vnics, vnic)
		}
		net.Vswitch = append(net.Vswitch, types.HostVirtualSwitch{
			Name:              vswitch,
			Key:               vswitchKey,
			NumPorts:          128,
			NumPortsAvailable: int32(128 - len(standard)),
			Mtu:               9000,
			Portgroup:         pgKeys,
			Pnic:              pnicKeys,
			Spec: types.HostVirtualSwitchSpec{
				NumPorts: 128,
				Bridge:   &types.HostVirtualSwitchBondBridge{NicDevice: uplinks},
				Mtu:      9000,
			},
		})
	}
	if len(distributed) > 0 {
		const dvsName = "dvs-vmotion"
		dvsUUID := uuidFrom("dvs", dvsName)
		_, pnicKeys := addPnics(distributed)
		var uplinkPorts []types.KeyValue
		for i := range pnicKeys {
			uplinkPorts = append(uplinkPorts, types.KeyValue{Key: fmt.Sprintf("%d", 100+i), Value: fmt.Sprintf("uplink%d", i+1)})
		}
		for i, v := range distributed {
			vnic := vnicOf(v, "")
			vnic.Spec.DistributedVirtualPort = &types.DistributedVirtualSwitchPortConnection{
				SwitchUuid:   dvsUUID,
				PortgroupKey: "dvportgroup-vmotion",
				PortKey:      fmt.Sprintf("%d", i),
			}
			net.Vnic = append(net.Vnic, vnic)
			vnics = append(vnics, vnic)
		}
		net.ProxySwitch = append(net.ProxySwitch, types.HostProxySwitch{
			DvsUuid:           dvsUUID,
			DvsName:           dvsName,
			Key:               dvsUUID,
			NumPorts:          128,
			NumPortsAvailable: int32(128 - len(distributed)),
			Mtu:               9000,
			UplinkPort:        uplinkPorts,
			Pnic:              pnicKeys,
			Spec:              types.HostProxySwitchSpec{},
		})
	}

	// Every adapter is a candidate for every service; keys carry the service name.
	candidates := func(service string) []types.HostVirtualNic {
		var out []types.HostVirtualNic
		for _, v := range vnics {
			v.Key = service + ".key-vim.host.VirtualNic-" + v.Device
			out = append(out, v)
		}
		return out
	}
	var netConfig []types.VirtualNicManagerNetConfig
	for _, service := range []string{
		"faultToleranceLogging", "management", "vSphereProvisioning", "vSphereReplication",
		"vSphereReplicationNFC", "vmotion", "vsan", "vsanWitness",
	} {
		c := types.VirtualNicManagerNetConfig{NicType: service, MultiSelectAllowed: true, CandidateVnic: candidates(service)}
		switch service {
		case "management":
			c.SelectedVnic = []string{c.CandidateVnic[0].Key}
		case "vmotion":
			for _, v := range c.CandidateVnic[1:] {
				c.SelectedVnic = append(c.SelectedVnic, v.Key)
			}
		}
		netConfig = append(netConfig, c)
	}
	cfg.VirtualNicManagerInfo = &types.HostVirtualNicManagerInfo{NetConfig: netConfig}

	// The pre-4.0 config.vmotion holds the first selected adapter.
	legacy := candidates("VMotionConfig.vmotion")
	cfg.Vmotion = &types.HostVMotionInfo{NetConfig: &types.HostVMotionNetConfig{CandidateVnic: legacy}}
	if len(legacy) > 1 {
		cfg.Vmotion.NetConfig.SelectedVnic = legacy[1].Key
		cfg.Vmotion.IpConfig = legacy[1].Spec.Ip
	}
}
