#!/bin/sh
# Build the lab binary (tests/lab/bin/gpuaudit-lab) on the govmomi simulator.
#
# Debian packages govmomi 0.24.2 as Go source; that release predates three fields
# the lab must serve (HostGraphicsInfo.vgpuMode, 8.0 U3, and
# VirtualPCIPassthroughVmiopBackingInfo.migrateSupported, 7.0 U2, and its
# vgpuMigrateDataSizeMB, 8.0 U1), the types of vCenter's description of vGPU
# profiles (ConfigTarget.vgpuProfileInfo, 7.0 U3, and its stunTimeEstimates,
# 8.0 U2), vSphere 9.0's DirectPathProfileManager (ServiceContent's
# directPathProfileManager, the QueryCapacity request and the data types it
# takes and returns), and vendor device groups (API 8.0.0.1: ConfigTarget's
# vendorDeviceGroupInfo, VirtualMachineConfigInfo's deviceGroups and
# VirtualDevice's deviceGroupInfo, with their data types). We copy the
# tree into tests/lab/.gopath, add the fields with govmomi-fields.patch and build
# in GOPATH mode with the copy ahead of /usr/share/gocode.
#
# Idempotent: installs Go and govmomi with apt-get only when they are missing,
# re-copies govmomi only when the patch or the package changed, and skips the
# build when the binary is newer than every source.
set -eu

LAB=$(cd "$(dirname "$0")" && pwd)
BIN="$LAB/bin/gpuaudit-lab"
GOCODE=/usr/share/gocode
GOVMOMI_SRC="$GOCODE/src/github.com/vmware/govmomi"
GOPATH_DIR="$LAB/.gopath"
GOVMOMI_DST="$GOPATH_DIR/src/github.com/vmware/govmomi"
PATCH_FILE="$LAB/govmomi-fields.patch"

missing() {
    ! command -v go >/dev/null 2>&1 ||
        [ ! -f "$GOVMOMI_SRC/simulator/model.go" ] ||
        [ ! -d "$GOCODE/src/github.com/google/uuid" ] ||
        ! command -v patch >/dev/null 2>&1
}

if missing; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        SUDO=sudo
    fi
    echo "build.sh: installing golang-go and golang-github-vmware-govmomi-dev" >&2
    $SUDO apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y \
        golang-go golang-github-vmware-govmomi-dev patch
    if missing; then
        echo "build.sh: Go or the govmomi source is still missing after apt-get" >&2
        exit 1
    fi
fi

# The stamp records which patch was applied to which govmomi package.
stamp="$(cksum <"$PATCH_FILE") $(cksum <"$GOVMOMI_SRC/vim25/types/types.go")"
if [ ! -f "$GOPATH_DIR/.stamp" ] || [ "$(cat "$GOPATH_DIR/.stamp")" != "$stamp" ]; then
    rm -f "$BIN"
    rm -rf "$GOPATH_DIR/src"
    mkdir -p "$(dirname "$GOVMOMI_DST")"
    cp -R "$GOVMOMI_SRC" "$GOVMOMI_DST"
    chmod -R u+w "$GOVMOMI_DST"
    types_go="$GOVMOMI_DST/vim25/types/types.go"
    if patch --dry-run -s -p1 -d "$GOVMOMI_DST" <"$PATCH_FILE" >/dev/null 2>&1; then
        patch -s -p1 -d "$GOVMOMI_DST" <"$PATCH_FILE"
    elif grep -q 'xml:"vgpuMode,omitempty"' "$types_go" &&
        grep -q 'xml:"migrateSupported,omitempty"' "$types_go" &&
        grep -q 'xml:"vgpuMigrateDataSizeMB,omitempty"' "$types_go" &&
        grep -q 'xml:"stunTimeEstimates,omitempty"' "$types_go" &&
        grep -q 'xml:"directPathProfileManager,omitempty"' "$types_go" &&
        grep -q 'DirectPathProfileManagerQueryCapacityResponse struct' "$types_go" &&
        grep -q 'xml:"vendorDeviceGroupInfo,omitempty"' "$types_go" &&
        grep -q 'xml:"deviceGroupInfo,omitempty"' "$types_go" &&
        grep -q 'xml:"deviceGroups,omitempty"' "$types_go"; then
        echo "build.sh: this govmomi already has the fields; not patching" >&2
    else
        echo "build.sh: govmomi-fields.patch does not apply to $GOVMOMI_SRC" >&2
        exit 1
    fi
    printf '%s\n' "$stamp" >"$GOPATH_DIR/.stamp"
fi

# The build is up to date when no source is newer than the binary.
if [ -x "$BIN" ] && [ -z "$(find "$LAB" -maxdepth 1 \
    \( -name '*.go' -o -name '*.patch' -o -name build.sh \) -newer "$BIN" -print)" ]; then
    exit 0
fi

# Go needs a cache directory; CI containers may have no HOME.
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
    export GOCACHE="$GOPATH_DIR/cache"
fi

mkdir -p "$LAB/bin"
cd "$LAB"
GO111MODULE=off GOPATH="$GOPATH_DIR:$GOCODE" GOFLAGS= \
    go build -trimpath -o "$BIN.tmp.$$" .
mv "$BIN.tmp.$$" "$BIN"
