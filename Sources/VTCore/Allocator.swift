import CLinux

/// How glibc's allocator is set for a process that records for days.
public enum Allocator {
    /// Allocations of `bytes` or more are mapped on their own and given back to the system when
    /// freed (mallopt's M_MMAP_THRESHOLD, which also stops glibc from raising the threshold
    /// after frees, up to 32 MiB, as it does by default). Encoded pictures, tens to hundreds of
    /// KiB each, made and freed by several threads, otherwise stay in glibc's arenas once
    /// freed, and a live recording's resident memory creeps up with them. False if glibc
    /// refused.
    public static func mapAllocations(from bytes: Int) -> Bool {
        vt_map_allocations_from(Int32(clamping: bytes)) == 1
    }
}
