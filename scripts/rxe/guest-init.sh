#!/bin/busybox sh
# /init of the Soft-RoCE guest's initramfs: loads the modules in the order of /mods/order, mounts
# the host root (read-only 9p) with tmpfs where it must be writable, mounts the writable share on
# /mnt/work and runs /mnt/work/guest.sh there, then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do
  case $m in
    dummy.ko) insmod /mods/$m numdummies=0 ;;
    *) insmod /mods/$m || echo "INIT: insmod $m failed" ;;
  esac
done
echo "INIT: modules loaded at $(cut -d' ' -f1 /proc/uptime) s"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /newroot; then
  echo "INIT: 9p mount of the host root failed"; poweroff -f
fi
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm 2>/dev/null
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/tmp
mount -t tmpfs tmpfs /newroot/run
mount -t tmpfs tmpfs /newroot/var/tmp
mount -t tmpfs tmpfs /newroot/mnt
mkdir -p /newroot/mnt/work
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 probe /newroot/mnt/work || echo "INIT: share mount failed"
echo "INIT: root ready at $(cut -d' ' -f1 /proc/uptime) s"
chroot /newroot /bin/bash /mnt/work/guest.sh
echo "INIT: guest.sh exit $? at $(cut -d' ' -f1 /proc/uptime) s"
sync
poweroff -f
