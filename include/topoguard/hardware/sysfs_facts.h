// Reading a sysfs tree (/sys, or a copy or fixture under another root) into SysfsFacts: the only
// I/O of the inventory. Every file is read with a size cap and through read_text_file (regular
// files only), every listing with a count budget; whatever cannot be read becomes a problem
// line and an unknown, never an error that stops the inventory.
#pragma once

#include <cstddef>
#include <string>

#include "topoguard/common/result.h"
#include "topoguard/hardware/pci_inventory.h"

namespace topoguard::hardware {

// Far above any machine (a DGX has a few hundred PCI functions; SR-IOV adds at most 256 VFs per
// PF): past it, the rest is reported as not read.
inline constexpr std::size_t kMaxSysfsEntries = 16384;

// The facts under `root`; an error only when root/bus/pci/devices cannot be listed at all.
[[nodiscard]] Result<SysfsFacts> read_sysfs_facts(const std::string& root);

}  // namespace topoguard::hardware
