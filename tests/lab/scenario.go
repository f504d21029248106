package main

// The normalised scenario, as tests/lab/scenario.py writes it: every default of
// docs/scenario-format.md is already filled in, so the lab does not repeat the
// rules here. Unknown fields are refused so that the two sides cannot drift.

import (
	"encoding/json"
	"fmt"
	"os"
)

type Scenario struct {
	Description string          `json:"description"`
	VCenter     VCenter         `json:"vcenter"`
	Datacenters []Datacenter    `json:"datacenters"`
	Expect      json.RawMessage `json:"expect"` // read by the tests only
	Faults      ScenarioFaults  `json:"faults"`
	Role        Role            `json:"role"`
}

// Role is what the audit account may do beyond the Read-only role (software.go).
type Role struct {
	Privileges []string `json:"privileges"`
}

// VgpuManager is the NVIDIA vGPU manager VIB a host has installed (software.go).
type VgpuManager struct {
	Version    string `json:"version"`
	VIB        string `json:"vib"`
	VIBVersion string `json:"vib_version"`
}

// VCenter is the server: a vCenter, or with Kind "esxi" a standalone ESXi host
// (esxi.go), whose about comes from its one host and which has no settings,
// statistics level or licence of its own.
type VCenter struct {
	Kind            string                 `json:"kind"`
	Name            string                 `json:"name"`
	Version         string                 `json:"version"`
	Build           string                 `json:"build"`
	APIVersion      string                 `json:"api_version"`
	Settings        map[string]interface{} `json:"settings"`
	StatisticsLevel int32                  `json:"statistics_level"`
	GPUCounters     []string               `json:"gpu_counters"`
	GPUCounterKey   int32                  `json:"gpu_counter_key"`
	Licence         Licence                `json:"licence"`
}

// Licence is a vSphere licence as the scenario assigns it (licence.go).
type Licence struct {
	Key      string           `json:"key"`
	Edition  string           `json:"edition"`
	Name     string           `json:"name"`
	Expires  *string          `json:"expires"`
	Features []LicenceFeature `json:"features"`
}

type LicenceFeature struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

type Datacenter struct {
	Name            string      `json:"name"`
	Clusters        []Cluster   `json:"clusters"`
	StandaloneHosts []Host      `json:"standalone_hosts"`
	Datastores      []Datastore `json:"datastores"`
	VMs             []VM        `json:"vms"`
}

type Cluster struct {
	Name         string        `json:"name"`
	HA           HA            `json:"ha"`
	DRS          DRS           `json:"drs"`
	Hosts        []Host        `json:"hosts"`
	ConfigIssues []ConfigIssue `json:"config_issues"`
	// EVCMode is the cluster's EVC baseline (summary.currentEVCModeKey); nil: EVC off.
	EVCMode *string `json:"evc_mode"`
	// DRS groups and rules (configurationEx.group and .rule).
	Groups []DRSGroup `json:"groups"`
	Rules  []DRSRule  `json:"rules"`
}

// DRSGroup is a VM group (VMs set) or a host group (Hosts set).
type DRSGroup struct {
	Name  string   `json:"name"`
	VMs   []string `json:"vms"`
	Hosts []string `json:"hosts"`
}

// DRSRule is a VM-Host rule (Kind "vm-host", with groups) or a VM-VM rule (Kind
// "affinity" or "anti-affinity", with VMs).
type DRSRule struct {
	Name                string   `json:"name"`
	Enabled             bool     `json:"enabled"`
	Mandatory           bool     `json:"mandatory"`
	Kind                string   `json:"kind"`
	VMGroup             string   `json:"vm_group"`
	AffineHostGroup     string   `json:"affine_host_group"`
	AntiAffineHostGroup string   `json:"anti_affine_host_group"`
	VMs                 []string `json:"vms"`
}

// ConfigIssue is an event vCenter keeps open in an entity's configIssue (clusters.go).
type ConfigIssue struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// VMCP is vSphere HA's VM Component Protection: the responses to APD and PDL.
type VMCP struct {
	Enabled bool   `json:"enabled"`
	APD     string `json:"apd"`
	PDL     string `json:"pdl"`
}

type Heartbeat struct {
	Policy     string   `json:"policy"`
	Datastores []string `json:"datastores"`
}

type HA struct {
	Enabled                bool              `json:"enabled"`
	HostMonitoring         bool              `json:"host_monitoring"`
	DefaultRestartPriority string            `json:"default_restart_priority"`
	AdmissionControl       AdmissionControl  `json:"admission_control"`
	IsolationResponse      string            `json:"isolation_response"`
	VMCP                   VMCP              `json:"vmcp"`
	Heartbeat              Heartbeat         `json:"heartbeat"`
	Options                map[string]string `json:"options"` // advanced options, key -> value
}

type AdmissionControl struct {
	Enabled       bool     `json:"enabled"`
	Policy        *string  `json:"policy"`
	FailoverLevel int32    `json:"failover_level"`
	CPUPercent    int32    `json:"cpu_percent"`
	MemoryPercent int32    `json:"memory_percent"`
	FailoverHosts []string `json:"failover_hosts"`
}

type DRS struct {
	Enabled    bool              `json:"enabled"`
	Automation string            `json:"automation"`
	Options    map[string]string `json:"options"` // advanced options, key -> value
}

type Host struct {
	Name         string        `json:"name"`
	Version      string        `json:"version"`
	Build        string        `json:"build"`
	Vendor       string        `json:"vendor"`
	Model        string        `json:"model"`
	CPUCores     int           `json:"cpu_cores"`
	CPUMhz       int32         `json:"cpu_mhz"`
	MemoryGB     int64         `json:"memory_gb"`
	Connection   string        `json:"connection"`
	Maintenance  bool          `json:"maintenance"`
	Graphics     HostGraphics  `json:"graphics"`
	GPUs         []GPU         `json:"gpus"`
	VgpuProfiles []VgpuProfile `json:"vgpu_profiles"`
	Adapters     []Adapter     `json:"adapters"`
	Vmotion      []VmotionVnic `json:"vmotion"`
	// How GPU counter instances are named: "pci" or "index" (perf.go).
	GPUCounterInstances string  `json:"gpu_counter_instances"`
	Licence             Licence `json:"licence"`
	// The HA agent state (runtime.dasHostState); nil: none reported.
	HAState      *string       `json:"ha_state"`
	ConfigIssues []ConfigIssue `json:"config_issues"`
	// MaxEVCMode is summary.maxEVCModeKey; nil serves none.
	MaxEVCMode *string  `json:"max_evc_mode"`
	BIOS       HostBIOS `json:"bios"`
	// The vendor device groups the host offers, served by QueryConfigTarget
	// (vendorDeviceGroupInfo, API 8.0.0.1; configtarget.go).
	DeviceGroups []DeviceGroup `json:"device_groups"`
	// VgpuManager is the NVIDIA vGPU manager VIB; nil: none installed.
	VgpuManager *VgpuManager `json:"vgpu_manager"`
}

// DeviceGroup is a vendor device group a host offers: devices a VM takes as a unit.
type DeviceGroup struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Components  []DeviceGroupComponent `json:"components"`
}

// DeviceGroupComponent is one device of a group: Type is pciPassthru, nvidiaVgpu,
// sriovNic or dvx; Vgpu the profile of an nvidiaVgpu component's device template.
type DeviceGroupComponent struct {
	Type         string  `json:"type"`
	Vendor       string  `json:"vendor"`
	Device       string  `json:"device"`
	Configurable bool    `json:"configurable"`
	Vgpu         *string `json:"vgpu"`
}

// HostBIOS is hardware.biosInfo; ReleaseDate is YYYY-MM-DD.
type HostBIOS struct {
	Version     string `json:"version"`
	ReleaseDate string `json:"release_date"`
}

type HostGraphics struct {
	DefaultType      string `json:"default_type"`
	AssignmentPolicy string `json:"assignment_policy"`
}

type GPU struct {
	PciID        string      `json:"pci_id"`
	VendorID     int         `json:"vendor_id"`
	DeviceID     int         `json:"device_id"`
	SubVendorID  int         `json:"sub_vendor_id"`
	SubDeviceID  int         `json:"sub_device_id"`
	VendorName   string      `json:"vendor_name"`
	DeviceName   string      `json:"device_name"`
	ClassID      int         `json:"class_id"`
	MemoryMB     int64       `json:"memory_mb"`
	Passthrough  Passthrough `json:"passthrough"`
	GraphicsType string      `json:"graphics_type"`
	VgpuMode     *string     `json:"vgpu_mode"`
	Telemetry    *Telemetry  `json:"telemetry"`
	// The GPU's own graphicsConfig.deviceType entry; "none" for none.
	DeviceType string `json:"device_type"`
	SRIOV      SRIOV  `json:"sriov"`
}

// SRIOV, when Reported, makes the device's pciPassthruInfo a HostSriovInfo.
type SRIOV struct {
	Reported bool  `json:"reported"`
	Capable  bool  `json:"capable"`
	Enabled  bool  `json:"enabled"`
	Active   bool  `json:"active"`
	VFs      int32 `json:"vfs"`
	MaxVFs   int32 `json:"max_vfs"`
	// Listed: the host lists the VFs virtual functions among its PCI devices.
	Listed bool `json:"listed"`
}

// Telemetry is a GPU's counter series, oldest first, one sample per interval.
type Telemetry struct {
	Utilization  []float64 `json:"utilization"`
	MemoryUsedMB []float64 `json:"memory_used_mb"`
	TemperatureC []float64 `json:"temperature_c"`
	PowerW       []float64 `json:"power_w"`
}

type Passthrough struct {
	Capable bool `json:"capable"`
	Enabled bool `json:"enabled"`
	Active  bool `json:"active"`
	// HardwareLabel is pciPassthruInfo.hardwareLabel (8.0); "" for none.
	HardwareLabel string `json:"hardware_label"`
}

type VgpuProfile struct {
	Name    string `json:"name"`
	Migrate bool   `json:"migrate"`
	Suspend bool   `json:"suspend"`
	// vCenter's description of the profile, served by QueryConfigTarget (configtarget.go):
	// fbSizeInGib, profileSharing, profileClass and deviceVendorId.
	FbGiB          int64  `json:"fb_gib"`
	Sharing        string `json:"sharing"`
	Class          string `json:"class"`
	DeviceVendorID int64  `json:"device_vendor_id"`
	// vCenter's stun time estimates for the profile (8.0 U2), served by QueryConfigTarget.
	StunEstimates []StunEstimate `json:"stun_estimates"`
	// vCenter's answer to QueryCapacity for the profile (directpath.go); nil below API 9.0.
	Capacity *ProfileCapacity `json:"capacity"`
}

// ProfileCapacity is either the four counts of a CapacityInfo or, with Unknown set, a
// CapacityUnknown carrying those faults.
type ProfileCapacity struct {
	Max               int32    `json:"max"`
	Consumed          int32    `json:"consumed"`
	Remaining         int32    `json:"remaining"`
	UnusedReservation int32    `json:"unused_reservation"`
	Unknown           []string `json:"unknown"`
}

type StunEstimate struct {
	BandwidthMbps int64 `json:"bandwidth_mbps"`
	StunS         int64 `json:"stun_s"`
}

type Adapter struct {
	Device   string  `json:"device"`
	Type     string  `json:"type"`
	Model    string  `json:"model"`
	Driver   string  `json:"driver"`
	Status   string  `json:"status"`
	PortWWN  *string `json:"port_wwn"`
	NodeWWN  *string `json:"node_wwn"`
	Software *bool   `json:"software"`
}

type VmotionVnic struct {
	Device          string `json:"device"`
	IP              string `json:"ip"`
	UplinkSpeedMbps int32  `json:"uplink_speed_mbps"`
	Switch          string `json:"switch"` // "standard" or "distributed"
}

type Datastore struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	CapacityGB int64   `json:"capacity_gb"`
	FreeGB     int64   `json:"free_gb"`
	Lun        *string `json:"lun"`
	Local      *bool   `json:"local"`
	Mounts     []Mount `json:"mounts"`
}

type Mount struct {
	Host       string `json:"host"`
	Mounted    bool   `json:"mounted"`
	Accessible bool   `json:"accessible"`
	Paths      []Path `json:"paths"`
}

type Path struct {
	Adapter string `json:"adapter"`
	State   string `json:"state"`
}

type VM struct {
	Name                string   `json:"name"`
	Host                string   `json:"host"`
	Power               string   `json:"power"`
	MemoryMB            int32    `json:"memory_mb"`
	MemoryReservationMB int64    `json:"memory_reservation_mb"`
	MemoryLockedToMax   bool     `json:"memory_locked_to_max"`
	Datastores          []string `json:"datastores"`
	RestartPriority     *string  `json:"restart_priority"`
	GPUs                []VMGPU  `json:"gpus"`
	IsolationResponse   *string  `json:"isolation_response"`
	Firmware            string   `json:"firmware"`
	// ExtraConfig entries of config.extraConfig, served sorted by key.
	ExtraConfig map[string]string `json:"extra_config"`
	MinEVCMode  *string           `json:"min_evc_mode"`
	// The vendor device groups the VM uses (API 8.0.0.1; vms.go).
	DeviceGroups []VMDeviceGroup `json:"device_groups"`
}

// VMDeviceGroup is a vendor device group of a VM: its name, its groupInstanceKey and
// the indices of the VM's GPUs that form it, in their sequence.
type VMDeviceGroup struct {
	Name string `json:"name"`
	Key  int32  `json:"key"`
	GPUs []int  `json:"gpus"`
}

// VMGPU is one of three forms: Vgpu, Passthrough or Dynamic is set.
type VMGPU struct {
	Vgpu             *string  `json:"vgpu"`
	MigrateSupported *bool    `json:"migrate_supported"`
	MigrateDataMB    *int32   `json:"migrate_data_mb"`
	On               *string  `json:"on"`
	Passthrough      *string  `json:"passthrough"`
	Dynamic          *Dynamic `json:"dynamic"`
}

type Dynamic struct {
	Allowed  []AllowedDevice `json:"allowed"`
	Assigned *string         `json:"assigned"`
	Label    string          `json:"label"`
}

type AllowedDevice struct {
	VendorID    int  `json:"vendor_id"`
	DeviceID    int  `json:"device_id"`
	SubVendorID *int `json:"sub_vendor_id"`
	SubDeviceID *int `json:"sub_device_id"`
}

// loadScenario reads the normalised JSON strictly: an unknown field is an error.
func loadScenario(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	dec.UseNumber() // settings keep their integer values
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scenario %s: %v", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("scenario %s: trailing data after the JSON document", path)
	}
	if len(s.Datacenters) == 0 {
		return nil, fmt.Errorf("scenario %s: no datacenters", path)
	}
	switch s.VCenter.Kind {
	case "vcenter":
	case "esxi":
		dc := s.Datacenters[0]
		if len(s.Datacenters) != 1 || len(dc.Clusters) != 0 || len(dc.StandaloneHosts) != 1 {
			return nil, fmt.Errorf("scenario %s: an ESXi host has one datacenter with one standalone host and no cluster", path)
		}
	default:
		return nil, fmt.Errorf("scenario %s: vcenter.kind %q is neither vcenter nor esxi", path, s.VCenter.Kind)
	}
	return &s, nil
}
