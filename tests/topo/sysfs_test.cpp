// sysfs under a root, and the PCI tree read from it.
#include "fabricbench/topo/sysfs.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

namespace fb::topo {
namespace {

Sysfs tree(const char* name) { return Sysfs(std::string(FB_TOPO_FIXTURES) + "/" + name); }

PciPlace place(const Sysfs& s, const char* bus) {
  const auto p = pci_place_of_bus_id(s, bus);
  EXPECT_TRUE(p) << p.why();
  return p ? *p : PciPlace{};
}

TEST(Sysfs, ReadsTrimmedTextAndIntegers) {
  const auto s = tree("hgx-h100-8gpu-8ndr");
  EXPECT_EQ(*s.read("sys/class/infiniband/mlx5_0/ports/1/rate"), "400 Gb/sec (4X NDR)");
  EXPECT_EQ(*s.read_int("sys/bus/pci/devices/0000:1a:00.0/current_link_width"), 16);
  EXPECT_EQ(s.list("sys/class/infiniband").size(), 8u);
  EXPECT_TRUE(s.list("sys/class/nothing").empty());
}

TEST(Sysfs, MissingAndUnreadableFilesSayWhy) {
  const auto s = tree("eth10g-cpu");
  const auto missing = s.read("sys/class/net/eth0/nothing");
  EXPECT_FALSE(missing);
  EXPECT_NE(missing.why().find("No such file"), std::string::npos) << missing.why();
  EXPECT_NE(missing.why().find("eth0/nothing"), std::string::npos);
  // Opens, then read() fails: what a driver without a speed answers.
  const auto unreadable = s.read_int("sys/class/net/eth1/speed");
  EXPECT_FALSE(unreadable);
  EXPECT_NE(unreadable.why().find("Is a directory"), std::string::npos) << unreadable.why();
  const auto garbage = tree("broken").read_int("sys/bus/pci/devices/0000:00:04.0/numa_node");
  EXPECT_FALSE(garbage);
  EXPECT_NE(garbage.why().find("'garbage'"), std::string::npos);
}

TEST(Sysfs, AFifoInTheTreeIsNotReadAndDoesNotHang) {
  // A FIFO planted in a --sysfs-root tree blocked open() for ever (no writer).
  std::string root = (std::filesystem::temp_directory_path() / "fb_sysfs_fifo_XXXXXX").string();
  ASSERT_NE(mkdtemp(root.data()), nullptr);
  std::filesystem::create_directories(root + "/sys/class/net/eth0");
  ASSERT_EQ(mkfifo((root + "/sys/class/net/eth0/speed").c_str(), 0600), 0);
  const auto speed = Sysfs(root).read_int("sys/class/net/eth0/speed");
  EXPECT_FALSE(speed);
  EXPECT_NE(speed.why().find("FIFO"), std::string::npos) << speed.why();
  std::filesystem::remove_all(root);
}

TEST(Sysfs, ResolvesLinksInsideTheRoot) {
  const auto s = tree("h200-vm");
  EXPECT_EQ(*s.resolve("sys/class/net/eth0"), "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
  EXPECT_FALSE(s.resolve("sys/class/net/eth9"));
}

TEST(Sysfs, ThisMachinesSysfsAnswersWithoutCrashing) {
  const Sysfs s("/");
  // The loopback interface has no speed: the kernel refuses the read.
  if (!s.exists("sys/class/net/lo/speed")) GTEST_SKIP() << "no /sys/class/net/lo/speed on this machine";
  const auto speed = s.read_int("sys/class/net/lo/speed");
  EXPECT_FALSE(speed);
  EXPECT_FALSE(speed.why().empty());
}

TEST(Sysfs, BusIdsFromNvmlAndSysfs) {
  EXPECT_EQ(*sysfs_bus_id("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(*sysfs_bus_id("0000:1a:00.0"), "0000:1a:00.0");
  EXPECT_EQ(*sysfs_bus_id("00000001:C1:00.1"), "0001:c1:00.1");
  EXPECT_EQ(*sysfs_bus_id("00010000:E0:00.0"), "10000:e0:00.0");  // an Intel VMD domain
  for (const char* odd :
       {"", "1a:00.0", "0000:1a:00", "0000:1g:00.0", "0000:1a:00.8", "123456789:1a:00.0", "0000:1a:00.0x"})
    EXPECT_FALSE(sysfs_bus_id(odd)) << odd;
}

TEST(Sysfs, PlaceOfADeviceInThePciTree) {
  const auto s = tree("hgx-h100-8gpu-8ndr");
  const auto gpu0 = place(s, "0000:1a:00.0");
  EXPECT_EQ(gpu0.host_bridge, "pci0000:17");
  EXPECT_EQ(gpu0.bridges, (std::vector<std::string>{"0000:17:01.0", "0000:18:00.0", "0000:19:00.0"}));
  EXPECT_EQ(*gpu0.numa_node, 0);
  // A netdev below a virtio device belongs to the PCI function above it.
  const auto vm = tree("h200-vm");
  const auto nic = pci_place_of_path(vm, "sys/class/net/eth0");
  ASSERT_TRUE(nic) << nic.why();
  EXPECT_EQ(nic->bus_id, "0000:00:03.0");
  EXPECT_FALSE(nic->numa_node);
  EXPECT_NE(nic->numa_node.why().find("-1"), std::string::npos);
  EXPECT_FALSE(pci_place_of_path(vm, "sys/class/net/lo"));  // virtual: on no bus
}

TEST(Sysfs, DistancesLikeNvidiaSmiTopo) {
  const auto s = tree("hgx-h100-8gpu-8ndr");
  const auto gpu0 = place(s, "0000:1a:00.0");
  EXPECT_EQ(pci_distance(gpu0, place(s, "0000:1b:00.0")), PciDistance::pix);   // its switch's HCA
  EXPECT_EQ(pci_distance(gpu0, place(s, "0000:1c:00.0")), PciDistance::pix);   // GPU1, same switch
  EXPECT_EQ(pci_distance(gpu0, place(s, "0000:3b:00.0")), PciDistance::node);  // other host bridge, socket 0
  EXPECT_EQ(pci_distance(gpu0, place(s, "0000:9a:00.0")), PciDistance::sys);   // socket 1
  const auto roce = tree("roce-2gpu");
  const auto l40s0 = place(roce, "0000:41:00.0");
  EXPECT_EQ(pci_distance(l40s0, place(roce, "0000:43:00.0")), PciDistance::phb);  // other root port
  EXPECT_EQ(pci_distance(place(roce, "0000:43:00.0"), place(roce, "0000:43:00.1")), PciDistance::pix);
  EXPECT_EQ(name(PciDistance::node), "NODE");
}

TEST(Sysfs, SwitchBehindASwitchIsPxb) {
  PciPlace a{"0000:05:00.0",
             "pci0000:00",
             {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"},
             0};
  PciPlace b{"0000:06:00.0", "pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, 0};
  EXPECT_EQ(pci_distance(a, b), PciDistance::pxb);
  // Different host bridges with no NUMA information at all: one domain.
  PciPlace c{"0000:80:00.0", "pci0000:80", {}, Fact<int>::unknown("-1")};
  PciPlace d{"0000:00:05.0", "pci0000:00", {}, Fact<int>::unknown("-1")};
  EXPECT_EQ(pci_distance(c, d), PciDistance::node);
}

}  // namespace
}  // namespace fb::topo
