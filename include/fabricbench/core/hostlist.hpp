// Slurm host lists ("gpu[01-16,20]", "a[1-2]-ib[0-1]", "n1,n2"), as
// scontrol show hostnames expands them, so a node list pasted from squeue or
// sinfo means the same to fabricbench.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fb {

// Every host of `list`, in order, duplicates kept. Commas inside brackets
// separate ranges, outside they separate hosts; a range keeps the zero
// padding of its first bound ("01-03" -> 01, 02, 03). Throws UsageError
// naming `flag` for unbalanced brackets, empty items, reversed ranges or a
// list of more than a million hosts.
std::vector<std::string> expand_hostlist(std::string_view list, std::string_view flag);

}  // namespace fb
