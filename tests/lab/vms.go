package main

// Virtual machines. The simulator's CreateVM_Task writes .vmx files to a local
// directory per datastore and picks random UUIDs, so the lab builds VM objects
// itself: registered on their host, in the host's resource pool and the
// datacenter's VM folder, with GPU devices of the three passthrough kinds.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

const (
	pciControllerKey  = 100
	videoCardKey      = 500
	scsiControllerKey = 1000
	diskKey           = 2000
	passthroughKey    = 13000
)

func (e *estate) addVM(dc *datacenterEntry, spec *VM) error {
	host := e.hosts[spec.Host]
	vm := &simulator.VirtualMachine{}
	vm.Name = vcName(spec.Name)
	simulator.Map.NewEntity(vm)

	var datastores []types.ManagedObjectReference
	for _, name := range spec.Datastores {
		ds := e.datastores[name]
		if ds == nil {
			return fmt.Errorf("VM %q: no datastore %q", spec.Name, name)
		}
		datastores = append(datastores, ds.Self)
		ds.Vm = append(ds.Vm, vm.Self)
	}
	vmx := fmt.Sprintf("%s/%s.vmx", vm.Name, vm.Name)
	dir := ""
	if len(spec.Datastores) > 0 {
		dir = fmt.Sprintf("[%s] %s", e.datastores[spec.Datastores[0]].Name, vm.Name)
		vmx = fmt.Sprintf("[%s] %s", e.datastores[spec.Datastores[0]].Name, vmx)
	}

	devices, err := e.vmDevices(spec, vm, host, datastores, dir)
	if err != nil {
		return err
	}
	reservation := spec.MemoryReservationMB
	limit := int64(-1)
	memoryAllocation := types.ResourceAllocationInfo{
		Reservation:           &reservation,
		ExpandableReservation: boolPtr(false),
		Limit:                 &limit,
		Shares:                &types.SharesInfo{Level: types.SharesLevelNormal, Shares: 10 * spec.MemoryMB},
	}
	cpuReservation := int64(0)
	cpuAllocation := types.ResourceAllocationInfo{
		Reservation:           &cpuReservation,
		ExpandableReservation: boolPtr(false),
		Limit:                 &limit,
		Shares:                &types.SharesInfo{Level: types.SharesLevelNormal, Shares: 4000},
	}
	biosUUID := uuidFrom("vm-bios", spec.Name)
	instanceUUID := uuidFrom("vm-instance", spec.Name)
	vm.Config = &types.VirtualMachineConfigInfo{
		ChangeVersion:                epoch.Format("2006-01-02T15:04:05.000000Z"),
		Modified:                     epoch,
		Name:                         vm.Name,
		GuestFullName:                "Ubuntu Linux (64-bit)",
		Version:                      "vmx-21",
		Uuid:                         biosUUID,
		InstanceUuid:                 instanceUUID,
		GuestId:                      string(types.VirtualMachineGuestOsIdentifierUbuntu64Guest),
		AlternateGuestName:           "",
		Files:                        types.VirtualMachineFileInfo{VmPathName: vmx, SnapshotDirectory: dir, SuspendDirectory: dir, LogDirectory: dir},
		Firmware:                     spec.Firmware,
		ExtraConfig:                  extraConfig(spec.ExtraConfig),
		Hardware:                     types.VirtualHardware{NumCPU: 8, NumCoresPerSocket: 8, MemoryMB: spec.MemoryMB, Device: devices},
		CpuAllocation:                &cpuAllocation,
		MemoryAllocation:             &memoryAllocation,
		MemoryReservationLockedToMax: boolPtr(spec.MemoryLockedToMax),
		MemoryHotAddEnabled:          boolPtr(false),
		CpuHotAddEnabled:             boolPtr(false),
	}
	// config.deviceGroups is an 8.0.0.1 field.
	if len(spec.DeviceGroups) > 0 && e.api.atLeast(8, 0, 0, 1) {
		groups := &types.VirtualMachineVirtualDeviceGroups{}
		for _, g := range spec.DeviceGroups {
			groups.DeviceGroup = append(groups.DeviceGroup, &types.VirtualMachineVirtualDeviceGroupsVendorDeviceGroup{
				VirtualMachineVirtualDeviceGroupsDeviceGroup: types.VirtualMachineVirtualDeviceGroupsDeviceGroup{
					GroupInstanceKey: g.Key,
					DeviceInfo:       &types.Description{Label: g.Name, Summary: g.Name},
				},
				DeviceGroupName: g.Name,
			})
		}
		vm.Config.DeviceGroups = groups
	}
	vm.ResourceConfig = &types.ResourceConfigSpec{
		Entity:           &vm.Self,
		ChangeVersion:    vm.Config.ChangeVersion,
		LastModified:     &epoch,
		CpuAllocation:    cpuAllocation,
		MemoryAllocation: memoryAllocation,
	}

	power := types.VirtualMachinePowerState(spec.Power)
	connection := types.VirtualMachineConnectionStateConnected
	if !host.connected() {
		// A VM on a host that vCenter cannot reach is reported as disconnected.
		connection = types.VirtualMachineConnectionStateDisconnected
	}
	vm.Runtime = types.VirtualMachineRuntimeInfo{
		Host:            &host.obj.Self,
		ConnectionState: connection,
		PowerState:      power,
		MaxCpuUsage:     8 * host.spec.CPUMhz,
		MaxMemoryUsage:  spec.MemoryMB,
	}
	if spec.MinEVCMode != nil {
		vm.Runtime.MinRequiredEVCModeKey = *spec.MinEVCMode
	}
	if power == types.VirtualMachinePowerStatePoweredOn {
		boot := epoch
		vm.Runtime.BootTime = &boot
	}
	toolsStatus := types.VirtualMachineToolsStatusToolsOk
	guestState := "running"
	if power != types.VirtualMachinePowerStatePoweredOn {
		toolsStatus = types.VirtualMachineToolsStatusToolsNotRunning
		guestState = "notRunning"
	}
	vm.Guest = &types.GuestInfo{
		ToolsStatus:          toolsStatus,
		ToolsVersion:         "12389",
		GuestId:              vm.Config.GuestId,
		GuestFullName:        vm.Config.GuestFullName,
		GuestState:           guestState,
		GuestOperationsReady: boolPtr(power == types.VirtualMachinePowerStatePoweredOn),
	}
	vm.Summary = types.VirtualMachineSummary{
		Vm:      &vm.Self,
		Runtime: vm.Runtime,
		Guest:   &types.VirtualMachineGuestSummary{GuestId: vm.Guest.GuestId, GuestFullName: vm.Guest.GuestFullName, ToolsStatus: toolsStatus},
		Config: types.VirtualMachineConfigSummary{
			Name:              vm.Name,
			VmPathName:        vmx,
			MemorySizeMB:      spec.MemoryMB,
			MemoryReservation: int32(spec.MemoryReservationMB),
			NumCpu:            8,
			NumVirtualDisks:   1,
			Uuid:              biosUUID,
			InstanceUuid:      instanceUUID,
			GuestId:           vm.Config.GuestId,
			GuestFullName:     vm.Config.GuestFullName,
		},
		OverallStatus: types.ManagedEntityStatusGreen,
	}
	vm.Datastore = datastores
	vm.ResourcePool = &host.pool
	vm.EnvironmentBrowser = *host.computeResource.EnvironmentBrowser

	folder := get(dc.folders.VmFolder.Reference()).(*simulator.Folder)
	folder.ChildEntity = append(folder.ChildEntity, vm.Self)
	simulator.Map.PutEntity(folder, vm)
	host.obj.Vm = append(host.obj.Vm, vm.Self)
	pool := get(host.pool).(*simulator.ResourcePool)
	pool.Vm = append(pool.Vm, vm.Self)
	e.vms[spec.Name] = vm
	return nil
}

// vmDevices returns a small but ordinary device list (PCI controller, video
// card, SCSI controller and disk) followed by the VM's GPUs.
func (e *estate) vmDevices(spec *VM, vm *simulator.VirtualMachine, host *hostEntry, datastores []types.ManagedObjectReference, dir string) ([]types.BaseVirtualDevice, error) {
	info := func(label, summary string) *types.Description {
		return &types.Description{Label: label, Summary: summary}
	}
	unit := func(n int32) *int32 { return &n }
	devices := []types.BaseVirtualDevice{
		&types.VirtualPCIController{VirtualController: types.VirtualController{
			VirtualDevice: types.VirtualDevice{Key: pciControllerKey, DeviceInfo: info("PCI controller 0", "PCI controller 0")},
			Device:        []int32{videoCardKey, scsiControllerKey},
		}},
		&types.VirtualMachineVideoCard{
			VirtualDevice:    types.VirtualDevice{Key: videoCardKey, ControllerKey: pciControllerKey, UnitNumber: unit(0), DeviceInfo: info("Video card ", "Video card")},
			VideoRamSizeInKB: 4096,
			NumDisplays:      1,
			Enable3DSupport:  boolPtr(false),
		},
		&types.ParaVirtualSCSIController{VirtualSCSIController: types.VirtualSCSIController{
			VirtualController: types.VirtualController{
				VirtualDevice: types.VirtualDevice{Key: scsiControllerKey, ControllerKey: pciControllerKey, UnitNumber: unit(3), DeviceInfo: info("SCSI controller 0", "VMware paravirtual SCSI")},
				Device:        []int32{diskKey},
			},
			SharedBus: types.VirtualSCSISharingNoSharing,
		}},
	}
	if len(datastores) > 0 {
		ds := datastores[0]
		devices = append(devices, &types.VirtualDisk{
			VirtualDevice: types.VirtualDevice{
				Key:           diskKey,
				ControllerKey: scsiControllerKey,
				UnitNumber:    unit(0),
				DeviceInfo:    info("Hard disk 1", "104,857,600 KB"),
				Backing: &types.VirtualDiskFlatVer2BackingInfo{
					VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{
						FileName:  fmt.Sprintf("%s/%s.vmdk", dir, vm.Name),
						Datastore: &ds,
					},
					DiskMode:        string(types.VirtualDiskModePersistent),
					ThinProvisioned: boolPtr(true),
					Uuid:            uuidFrom("disk", spec.Name),
				},
			},
			CapacityInKB:    100 << 20,
			CapacityInBytes: 100 << 30,
		})
	}
	for i, g := range spec.GPUs {
		d := &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Key:           int32(passthroughKey + i),
			ControllerKey: pciControllerKey,
			UnitNumber:    unit(int32(18 + i)),
		}}
		label := fmt.Sprintf("PCI device %d", i)
		var using string // the host device this one runs on, while powered on
		switch {
		case g.Vgpu != nil:
			backing := &types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: *g.Vgpu}
			// migrateSupported is a 7.0 U2 field.
			if e.api.atLeast(7, 0, 2, 0) {
				backing.MigrateSupported = g.MigrateSupported
			}
			// vgpuMigrateDataSizeMB is an 8.0 U1 (8.0.0.1) field.
			if g.MigrateDataMB != nil && e.api.atLeast(8, 0, 0, 1) {
				backing.VgpuMigrateDataSizeMB = *g.MigrateDataMB
			}
			d.Backing = backing
			d.DeviceInfo = info(label, "NVIDIA GRID vGPU "+*g.Vgpu)
			if g.On != nil {
				using = *g.On
			}
		case g.Passthrough != nil:
			gpu := findGPU(host.spec, *g.Passthrough)
			if gpu == nil {
				return nil, fmt.Errorf("VM %q: host %q has no GPU %s", spec.Name, spec.Host, *g.Passthrough)
			}
			d.Backing = &types.VirtualPCIPassthroughDeviceBackingInfo{
				VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: gpu.DeviceName},
				Id:                             gpu.PciID,
				// ESXi writes the device id as unsigned lower-case hex and the
				// vendor id as a signed short.
				DeviceId: fmt.Sprintf("%x", gpu.DeviceID),
				SystemId: uuidFrom("system", host.spec.Name),
				VendorId: signed16(gpu.VendorID),
			}
			d.DeviceInfo = info(label, gpu.DeviceName)
			using = gpu.PciID
		case g.Dynamic != nil:
			backing := &types.VirtualPCIPassthroughDynamicBackingInfo{CustomLabel: g.Dynamic.Label}
			for _, a := range g.Dynamic.Allowed {
				allowed := types.VirtualPCIPassthroughAllowedDevice{
					VendorId: int32(signed16(a.VendorID)),
					DeviceId: int32(signed16(a.DeviceID)),
				}
				if a.SubVendorID != nil {
					allowed.SubVendorId = int32(signed16(*a.SubVendorID))
				}
				if a.SubDeviceID != nil {
					allowed.SubDeviceId = int32(signed16(*a.SubDeviceID))
				}
				backing.AllowedDevice = append(backing.AllowedDevice, allowed)
			}
			if g.Dynamic.Assigned != nil {
				backing.AssignedId = *g.Dynamic.Assigned
				using = *g.Dynamic.Assigned
			}
			d.Backing = backing
			d.DeviceInfo = info(label, strings.TrimSpace("Dynamic DirectPath "+g.Dynamic.Label))
		default:
			return nil, fmt.Errorf("VM %q: GPU %d has no vgpu, passthrough or dynamic", spec.Name, i)
		}
		// deviceGroupInfo is an 8.0.0.1 field: the group and the device's place in it.
		if e.api.atLeast(8, 0, 0, 1) {
			for _, group := range spec.DeviceGroups {
				for seq, member := range group.GPUs {
					if member == i {
						d.DeviceGroupInfo = &types.VirtualDeviceDeviceGroupInfo{GroupInstanceKey: group.Key, SequenceId: int32(seq)}
					}
				}
			}
		}
		if using != "" && spec.Power == "poweredOn" {
			refs := host.gpuVMs[using]
			addReference(&refs, vm.Self)
			host.gpuVMs[using] = refs
		}
		devices = append(devices, d)
	}
	return devices, nil
}

// extraConfig serves a VM's advanced settings in a stable order.
func extraConfig(entries map[string]string) []types.BaseOptionValue {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []types.BaseOptionValue
	for _, k := range keys {
		out = append(out, &types.OptionValue{Key: k, Value: entries[k]})
	}
	return out
}

func findGPU(h *Host, pciID string) *GPU {
	for i := range h.GPUs {
		if h.GPUs[i].PciID == pciID {
			return &h.GPUs[i]
		}
	}
	return nil
}
