package main

// Datastores and the storage a host sees: host bus adapters, the SCSI LUN behind
// each VMFS datastore it mounts, and the paths to that LUN (multipathInfo and
// scsiTopology). The collector follows
// datastore.info.vmfs.extent[].diskName -> scsiLun.canonicalName -> key ->
// multipathInfo.lun[].lun -> path[].adapter -> hostBusAdapter.key.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// hbaClasses names the vSphere class behind each adapter type; keys are
// "key-vim.host.<Class>-<device>" as ESXi writes them.
var hbaClasses = map[string]string{
	"fc":    "FibreChannelHba",
	"fcoe":  "FibreChannelOverEthernetHba",
	"iscsi": "InternetScsiHba",
	"sas":   "SerialAttachedHba",
	"block": "BlockHba",
}

func hbaKey(a *Adapter) string {
	return "key-vim.host." + hbaClasses[a.Type] + "-" + a.Device
}

// wwnInt reads "10:00:00:10:9b:00:00:01" as the xsd:long the API sends.
func wwnInt(wwn string) int64 {
	n, err := strconv.ParseUint(strings.ReplaceAll(wwn, ":", ""), 16, 64)
	if err != nil {
		return 0
	}
	return int64(n)
}

func hostBusAdapter(host string, a *Adapter) types.BaseHostHostBusAdapter {
	base := types.HostHostBusAdapter{
		Key:             hbaKey(a),
		Device:          a.Device,
		Status:          a.Status,
		Model:           a.Model,
		Driver:          a.Driver,
		StorageProtocol: "scsi",
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(a.Device, "vmhba")); err == nil && a.Software == nil {
		base.Pci = fmt.Sprintf("0000:%02x:00.%d", 0x5e+n/2, n%2)
	}
	switch a.Type {
	case "fc":
		return &types.HostFibreChannelHba{
			HostHostBusAdapter: base,
			PortWorldWideName:  wwnInt(*a.PortWWN),
			NodeWorldWideName:  wwnInt(*a.NodeWWN),
			PortType:           types.FibreChannelPortTypeFabric,
			Speed:              32,
		}
	case "fcoe":
		return &types.HostFibreChannelOverEthernetHba{
			HostFibreChannelHba: types.HostFibreChannelHba{
				HostHostBusAdapter: base,
				PortWorldWideName:  wwnInt(*a.PortWWN),
				NodeWorldWideName:  wwnInt(*a.NodeWWN),
				PortType:           types.FibreChannelPortTypeFabric,
				Speed:              10,
			},
			UnderlyingNic: "vmnic1",
			LinkInfo: types.HostFibreChannelOverEthernetHbaLinkInfo{
				VnportMac: macFrom("vnport", host, a.Device),
				FcfMac:    macFrom("fcf", a.Device),
				VlanId:    100,
			},
		}
	case "iscsi":
		software := a.Software != nil && *a.Software
		iqn := "iqn.1998-01.com.vmware:" + iqnLabel(host) + "-" + hexDigest("iqn", host, a.Device)[:8]
		return &types.HostInternetScsiHba{
			HostHostBusAdapter:    base,
			IsSoftwareBased:       software,
			CanBeDisabled:         boolPtr(software),
			NetworkBindingSupport: types.HostInternetScsiHbaNetworkBindingSupportTypeOptional,
			DiscoveryCapabilities: types.HostInternetScsiHbaDiscoveryCapabilities{
				StaticTargetDiscoverySettable: true,
				SendTargetsDiscoverySettable:  true,
			},
			DiscoveryProperties: types.HostInternetScsiHbaDiscoveryProperties{
				StaticTargetDiscoveryEnabled: true,
				SendTargetsDiscoveryEnabled:  true,
			},
			IScsiName:            iqn,
			ConfiguredSendTarget: []types.HostInternetScsiHbaSendTarget{{Address: iscsiPortal, Port: 3260}},
			MaxSpeedMb:           25000,
			CurrentSpeedMb:       25000,
		}
	case "sas":
		return &types.HostSerialAttachedHba{
			HostHostBusAdapter: base,
			NodeWorldWideName:  "5" + hexDigest("sas", host, a.Device)[:15],
		}
	default:
		if a.Driver == "nvme_pcie" {
			base.StorageProtocol = "nvme"
		}
		return &types.HostBlockHba{HostHostBusAdapter: base}
	}
}

const iscsiPortal = "192.168.60.10"

// iqnLabel keeps the characters an iSCSI name may contain.
func iqnLabel(host string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.SplitN(host, ".", 2)[0]) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "esx"
	}
	return b.String()
}

// addDatastore creates a datastore in the datacenter's datastore folder and
// mounts it on its hosts.
func (e *estate) addDatastore(dc *datacenterEntry, spec *Datastore) {
	ds := &simulator.Datastore{}
	ds.Name = vcName(spec.Name)
	simulator.Map.NewEntity(ds)

	capacity := spec.CapacityGB << 30
	free := spec.FreeGB << 30
	id := datastoreID(spec)
	url := "ds:///vmfs/volumes/" + id + "/"
	info := types.DatastoreInfo{
		Name:                   ds.Name,
		Url:                    url,
		FreeSpace:              free,
		MaxFileSize:            62 << 40,
		MaxVirtualDiskCapacity: 62 << 40,
		MaxMemoryFileSize:      64 << 40,
		Timestamp:              &epoch,
	}
	summaryType := spec.Type
	switch spec.Type {
	case "VMFS":
		ds.Info = &types.VmfsDatastoreInfo{
			DatastoreInfo:          info,
			MaxPhysicalRDMFileSize: 64 << 40,
			MaxVirtualRDMFileSize:  62 << 40,
			Vmfs: &types.HostVmfsVolume{
				HostFileSystemVolume: types.HostFileSystemVolume{Type: "VMFS", Name: ds.Name, Capacity: capacity},
				BlockSizeMb:          1,
				BlockSize:            1024,
				UnmapGranularity:     1024,
				UnmapPriority:        "low",
				MaxBlocks:            63963136,
				MajorVersion:         6,
				Version:              "6.82",
				Uuid:                 id,
				Extent:               []types.HostScsiDiskPartition{{DiskName: *spec.Lun, Partition: 1}},
				Ssd:                  boolPtr(true),
				Local:                spec.Local,
				ScsiDiskType:         "native512",
			},
		}
	case "NFS", "NFS41":
		nas := &types.HostNasVolume{
			HostFileSystemVolume: types.HostFileSystemVolume{Type: spec.Type, Name: ds.Name, Capacity: capacity},
			RemoteHost:           "nfs01.lab.local",
			RemotePath:           "/export/" + hexDigest("nfs", spec.Name)[:12],
		}
		if spec.Type == "NFS41" {
			nas.RemoteHostNames = []string{nas.RemoteHost}
			nas.SecurityType = "AUTH_SYS"
		}
		ds.Info = &types.NasDatastoreInfo{DatastoreInfo: info, Nas: nas}
	case "vsan":
		ds.Info = &types.VsanDatastoreInfo{DatastoreInfo: info, MembershipUuid: uuidFrom("vsan", spec.Name)}
	}

	accessible := false
	for _, m := range spec.Mounts {
		accessible = accessible || (m.Mounted && m.Accessible)
	}
	ds.Summary = types.DatastoreSummary{
		Datastore:          &ds.Self,
		Name:               ds.Name,
		Url:                url,
		Capacity:           capacity,
		FreeSpace:          free,
		Accessible:         accessible,
		MultipleHostAccess: boolPtr(len(spec.Mounts) > 1),
		Type:               summaryType,
		MaintenanceMode:    string(types.DatastoreSummaryMaintenanceModeStateNormal),
	}
	ds.Capability = types.DatastoreCapability{
		DirectoryHierarchySupported:      true,
		RawDiskMappingsSupported:         spec.Type == "VMFS",
		PerFileThinProvisioningSupported: true,
		StorageIORMSupported:             boolPtr(spec.Type == "VMFS"),
		NativeSnapshotSupported:          boolPtr(false),
		TopLevelDirectoryCreateSupported: boolPtr(true),
		SeSparseSupported:                boolPtr(spec.Type == "VMFS"),
	}
	browser := &simulator.HostDatastoreBrowser{}
	browser.Datastore = []types.ManagedObjectReference{ds.Self}
	ds.Browser = simulator.Map.Put(browser).Reference()

	for _, m := range spec.Mounts {
		h := e.hosts[m.Host]
		ds.Host = append(ds.Host, types.DatastoreHostMount{
			Key: h.obj.Self,
			MountInfo: types.HostMountInfo{
				Path:       "/vmfs/volumes/" + id,
				AccessMode: string(types.HostMountModeReadWrite),
				Mounted:    boolPtr(m.Mounted),
				Accessible: boolPtr(m.Accessible),
			},
		})
		if !m.Accessible {
			ds.Host[len(ds.Host)-1].MountInfo.InaccessibleReason = "AllPathsDown_Start"
		}
		h.obj.Datastore = append(h.obj.Datastore, ds.Self)
		addReference(&h.computeResource.Datastore, ds.Self)
	}

	folder := get(dc.folders.DatastoreFolder.Reference()).(*simulator.Folder)
	folder.ChildEntity = append(folder.ChildEntity, ds.Self)
	simulator.Map.PutEntity(folder, ds)
	dc.obj.Datastore = append(dc.obj.Datastore, ds.Self)
	e.datastores[spec.Name] = ds
}

// datastoreID is the volume id in the datastore's URL: a VMFS UUID, or the
// forms NFS and vSAN volumes use.
func datastoreID(spec *Datastore) string {
	h := hexDigest("volume", spec.Name)
	switch spec.Type {
	case "VMFS":
		return h[0:8] + "-" + h[8:16] + "-" + h[16:20] + "-" + h[20:32]
	case "vsan":
		return "vsan:" + h[0:16] + "-" + h[16:32]
	default:
		return h[0:8] + "-" + h[8:16]
	}
}

func addReference(refs *[]types.ManagedObjectReference, ref types.ManagedObjectReference) {
	for _, r := range *refs {
		if r == ref {
			return
		}
	}
	*refs = append(*refs, ref)
}

// configureStorage writes config.storageDevice: the adapters, one SCSI disk per
// VMFS datastore the host mounts, and that disk's paths.
func (e *estate) configureStorage(h *hostEntry) {
	spec := h.spec
	adapters := map[string]*Adapter{}
	dev := &types.HostStorageDeviceInfo{MultipathInfo: &types.HostMultipathInfo{}, ScsiTopology: &types.HostScsiTopology{}}
	topology := map[string]*types.HostScsiTopologyInterface{}
	for i := range spec.Adapters {
		a := &spec.Adapters[i]
		adapters[a.Device] = a
		dev.HostBusAdapter = append(dev.HostBusAdapter, hostBusAdapter(spec.Name, a))
		if a.Software != nil && *a.Software {
			dev.SoftwareInternetScsiEnabled = true
		}
		topology[a.Device] = &types.HostScsiTopologyInterface{
			Key:     "key-vim.host.ScsiTopology.Interface-" + a.Device,
			Adapter: hbaKey(a),
		}
	}

	lunNumber := 0
	for i := range h.dc.spec.Datastores {
		ds := &h.dc.spec.Datastores[i]
		if ds.Type != "VMFS" {
			continue
		}
		lunNumber++ // LUN numbers follow the datastores, so every host sees a LUN at the same number
		var mount *Mount
		for j := range ds.Mounts {
			if ds.Mounts[j].Host == spec.Name {
				mount = &ds.Mounts[j]
			}
		}
		if mount == nil {
			continue
		}
		lun := scsiDisk(ds, mount, adapters)
		dev.ScsiLun = append(dev.ScsiLun, lun)
		mp := types.HostMultipathInfoLogicalUnit{
			Key:                    "key-vim.host.MultipathInfo.LogicalUnit-" + lun.Uuid,
			Id:                     lun.Uuid,
			Lun:                    lun.Key,
			Policy:                 &types.HostMultipathInfoLogicalUnitPolicy{Policy: "VMW_PSP_RR"},
			StorageArrayTypePolicy: &types.HostMultipathInfoLogicalUnitStorageArrayTypePolicy{Policy: "VMW_SATP_ALUA"},
		}
		if *lun.LocalDisk {
			mp.Policy = &types.HostMultipathInfoLogicalUnitPolicy{Policy: "VMW_PSP_FIXED"}
			mp.StorageArrayTypePolicy.Policy = "VMW_SATP_LOCAL"
		}
		for _, p := range mount.Paths {
			a := adapters[p.Adapter]
			name := fmt.Sprintf("%s:C0:T0:L%d", a.Device, lunNumber)
			transport := targetTransport(a)
			mp.Path = append(mp.Path, types.HostMultipathInfoPath{
				Key:           "key-vim.host.MultipathInfo.Path-" + name,
				Name:          name,
				PathState:     p.State,
				State:         p.State,
				IsWorkingPath: boolPtr(p.State == "active"),
				Adapter:       hbaKey(a),
				Lun:           mp.Key,
				Transport:     transport,
			})
			iface := topology[a.Device]
			if len(iface.Target) == 0 {
				iface.Target = append(iface.Target, types.HostScsiTopologyTarget{
					Key:       "key-vim.host.ScsiTopology.Target-" + a.Device + ":0:0",
					Transport: transport,
				})
			}
			iface.Target[0].Lun = append(iface.Target[0].Lun, types.HostScsiTopologyLun{
				Key:     "key-vim.host.ScsiTopology.Lun-" + lun.Uuid,
				Lun:     int32(lunNumber),
				ScsiLun: lun.Key,
			})
		}
		dev.MultipathInfo.Lun = append(dev.MultipathInfo.Lun, mp)
	}
	for i := range spec.Adapters {
		dev.ScsiTopology.Adapter = append(dev.ScsiTopology.Adapter, *topology[spec.Adapters[i].Device])
	}
	h.obj.Config.StorageDevice = dev
}

// scsiDisk describes the LUN behind a VMFS datastore as one host sees it.
func scsiDisk(ds *Datastore, mount *Mount, adapters map[string]*Adapter) *types.HostScsiDisk {
	local := true
	for _, p := range mount.Paths {
		t := adapters[p.Adapter].Type
		local = local && (t == "sas" || t == "block")
	}
	canonical := *ds.Lun
	id := strings.TrimPrefix(canonical, "naa.")
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		id = hexDigest("lun", canonical)[:32]
	}
	uuid := "0200000000" + id + "4c554e202020" // the NAA id and "LUN   ", as ESXi forms it
	vendor, model, kind := "NETAPP", "LUN C-Mode", "Fibre Channel"
	switch adapters[mount.Paths[0].Adapter].Type {
	case "iscsi":
		kind = "iSCSI"
	case "sas", "block":
		vendor, model, kind = "DELL", "PERC H755 Front", "Local"
	}
	block := ds.CapacityGB << 21 // 512-byte blocks
	return &types.HostScsiDisk{
		ScsiLun: types.ScsiLun{
			HostDevice:       types.HostDevice{DeviceName: "/vmfs/devices/disks/" + canonical, DeviceType: "disk"},
			Key:              "key-vim.host.ScsiDisk-" + uuid,
			Uuid:             uuid,
			CanonicalName:    canonical,
			DisplayName:      fmt.Sprintf("%s %s Disk (%s)", vendor, kind, canonical),
			LunType:          "disk",
			Vendor:           vendor,
			Model:            model,
			Revision:         "9141",
			ScsiLevel:        6,
			SerialNumber:     strings.ToUpper(hexDigest("serial", canonical)[:20]),
			QueueDepth:       64,
			OperationalState: []string{"ok"},
			VStorageSupport:  "vStorageSupported",
			ProtocolEndpoint: boolPtr(false),
		},
		Capacity:     types.HostDiskDimensionsLba{BlockSize: 512, Block: block},
		DevicePath:   "/vmfs/devices/disks/" + canonical,
		Ssd:          boolPtr(true),
		LocalDisk:    boolPtr(local),
		ScsiDiskType: "native512",
	}
}

// targetTransport describes the array port at the far end of an adapter's
// paths: one storage array, with one target port per fabric (adapter).
func targetTransport(a *Adapter) types.BaseHostTargetTransport {
	switch a.Type {
	case "fc", "fcoe":
		// NetApp-style target names: port 20:0n:00:a0:98:xx:xx:xx, node 20:00:00:a0:98:...
		port := digest("target", a.Device)
		tail := int64(port[0])<<16 | int64(port[1])<<8 | int64(port[2])
		fc := types.HostFibreChannelTargetTransport{
			PortWorldWideName: 0x2001_00a0_9800_0000 | tail,
			NodeWorldWideName: 0x2000_00a0_9800_0000 | tail,
		}
		if a.Type == "fcoe" {
			return &types.HostFibreChannelOverEthernetTargetTransport{
				HostFibreChannelTargetTransport: fc,
				VnportMac:                       macFrom("target-vnport", a.Device),
				FcfMac:                          macFrom("fcf", a.Device),
				VlanId:                          100,
			}
		}
		return &fc
	case "iscsi":
		return &types.HostInternetScsiTargetTransport{
			IScsiName:  "iqn.1992-08.com.netapp:sn.4082367740c611ef8b2b00a098000001",
			IScsiAlias: "svm-iscsi",
			Address:    []string{iscsiPortal + ":3260"},
		}
	case "sas":
		return &types.HostSerialAttachedTargetTransport{}
	default:
		return &types.HostBlockAdapterTargetTransport{}
	}
}
