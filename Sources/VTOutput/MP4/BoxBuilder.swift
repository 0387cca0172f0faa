/// Builds ISO base media file format boxes (ISO/IEC 14496-12) into bytes: big-endian fields,
/// and boxes that nest, each given its size once its contents are known.
struct BoxBuilder {
    private(set) var bytes: [UInt8] = []
    /// Where each open box starts, innermost last.
    private var open: [Int] = []

    init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func u24(_ value: UInt32) {
        precondition(value < 1 << 24, "a 24-bit field holds less than 2^24")
        bytes.append(UInt8(value >> 16))
        bytes.append(UInt8((value >> 8) & 0xFF))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func u64(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }

    mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// A four-character code; characters are Latin-1, as in `©too`.
    mutating func fourCC(_ code: String) {
        let latin1 = code.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        precondition(latin1.count == 4 && code.unicodeScalars.allSatisfy { $0.value < 256 },
                     "a box type is four Latin-1 characters")
        bytes.append(contentsOf: latin1)
    }

    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// A NUL-terminated UTF-8 string.
    mutating func cString(_ text: String) {
        bytes.append(contentsOf: Array(text.utf8))
        bytes.append(0)
    }

    /// The 3×3 unity matrix of mvhd and tkhd (16.16, 16.16, 2.30 fixed point).
    mutating func unityMatrix() {
        for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { u32(value) }
    }

    /// A box whose contents `body` writes; its 32-bit size is filled in afterwards.
    mutating func box(_ type: String, _ body: (inout BoxBuilder) -> Void) {
        let start = bytes.count
        open.append(start)
        u32(0)
        fourCC(type)
        body(&self)
        open.removeLast()
        let size = bytes.count - start
        precondition(size <= Int(UInt32.max), "a box this large needs a 64-bit size")
        withUnsafeBytes(of: UInt32(size).bigEndian) { size in
            for (i, byte) in size.enumerated() { bytes[start + i] = byte }
        }
    }

    /// A full box: a box whose contents start with a version and 24 bits of flags.
    mutating func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: (inout BoxBuilder) -> Void) {
        box(type) { w in
            w.u8(version)
            w.u24(flags)
            body(&w)
        }
    }

    /// An MPEG-4 descriptor (ISO/IEC 14496-1, as `esds` holds them): a tag, then the size of
    /// what `body` writes in 7-bit groups, most significant first, each but the last with its
    /// top bit set.
    mutating func descriptor(_ tag: UInt8, _ body: (inout BoxBuilder) -> Void) {
        var inner = BoxBuilder()
        body(&inner)
        precondition(inner.count < 1 << 28, "a descriptor's size fits in four 7-bit groups")
        u8(tag)
        var groups = [UInt8(inner.count & 0x7F)]
        var rest = inner.count >> 7
        while rest > 0 {
            groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        bytes.append(contentsOf: groups)
        bytes.append(contentsOf: inner.bytes)
    }

    /// Overwrites a 32-bit field already written at `offset`.
    mutating func patch(u32 value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.bigEndian) { field in
            for (i, byte) in field.enumerated() { bytes[offset + i] = byte }
        }
    }
}
