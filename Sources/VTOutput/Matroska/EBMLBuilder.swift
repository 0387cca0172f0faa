/// Builds EBML elements (RFC 8794), the encoding Matroska is made of: an element ID (its
/// length marker included, as the specification writes IDs), a variable-length size, then the
/// data; a master element's data is more elements.
struct EBMLBuilder {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    /// The size a writer does not know yet (all data bits set, RFC 8794 §6.2): a live
    /// Segment's, until a clean end fills it in.
    static let unknownSize: [UInt8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    /// The largest size an eight-byte size field holds (2^56 − 2; all ones means unknown).
    static let largestSize: UInt64 = (1 << 56) - 2

    /// An element ID: 1 to 4 bytes, its leading byte carrying the length marker.
    mutating func id(_ id: UInt32) {
        let length = id > 0xFF_FFFF ? 4 : id > 0xFFFF ? 3 : id > 0xFF ? 2 : 1
        for shift in stride(from: (length - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: id >> UInt32(shift)))
        }
    }

    /// A size in the fewest bytes, or in exactly `width` bytes (1...8).
    mutating func size(_ value: UInt64, width: Int? = nil) {
        bytes += Self.encodedSize(value, width: width)
    }

    static func encodedSize(_ value: UInt64, width: Int? = nil) -> [UInt8] {
        // n bytes carry 7n bits; the value with every one of them set is reserved.
        let length = width ?? (1...8).first { value < (UInt64(1) << UInt64(7 * $0)) - 1 }!
        precondition((1...8).contains(length) && value < (UInt64(1) << UInt64(7 * length)) - 1,
                     "an EBML size of \(value) does not fit in \(length) bytes")
        var encoded = [UInt8](repeating: 0, count: length)
        var rest = value
        for index in stride(from: length - 1, through: 0, by: -1) {
            encoded[index] = UInt8(truncatingIfNeeded: rest)
            rest >>= 8
        }
        encoded[0] |= UInt8(0x80 >> (length - 1))
        return encoded
    }

    mutating func unsigned(_ id: UInt32, _ value: UInt64) {
        let length = max(1, (UInt64.bitWidth - value.leadingZeroBitCount + 7) / 8)
        self.id(id)
        size(UInt64(length))
        for shift in stride(from: (length - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// A signed integer in eight bytes (DateUTC).
    mutating func signed(_ id: UInt32, _ value: Int64) {
        self.id(id)
        size(8)
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A float in eight bytes (IEEE 754 double).
    mutating func float(_ id: UInt32, _ value: Double) {
        self.id(id)
        size(8)
        withUnsafeBytes(of: value.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ id: UInt32, _ value: String) {
        binary(id, Array(value.utf8))
    }

    mutating func binary(_ id: UInt32, _ value: [UInt8]) {
        self.id(id)
        size(UInt64(value.count))
        bytes += value
    }

    /// A master element whose children `body` writes; its size is known once they are.
    mutating func master(_ id: UInt32, _ body: (inout EBMLBuilder) -> Void) {
        var children = EBMLBuilder()
        body(&children)
        binary(id, children.bytes)
    }

    /// A Void element of exactly `length` bytes (at least 2): room kept for something
    /// written later, which readers skip.
    mutating func void(length: Int) {
        precondition(length >= 2, "a Void element takes at least two bytes")
        id(MatroskaID.void)
        // One size byte holds up to 126; past that an eight-byte size leaves the rest as data.
        let sizeWidth = length - 2 <= 126 ? 1 : 8
        precondition(length - 1 - sizeWidth >= 0, "a Void element of \(length) bytes cannot be made")
        size(UInt64(length - 1 - sizeWidth), width: sizeWidth)
        bytes += repeatElement(0, count: length - 1 - sizeWidth)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func append(_ other: [UInt8]) { bytes += other }

    mutating func append(_ other: UnsafeRawBufferPointer) { bytes.append(contentsOf: other) }

    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Overwrites bytes already written, from `offset`.
    mutating func patch(_ replacement: [UInt8], at offset: Int) {
        bytes.replaceSubrange(offset..<(offset + replacement.count), with: replacement)
    }
}

/// The Matroska element IDs vtrecord writes (Matroska specification, RFC 9559).
enum MatroskaID {
    static let ebml: UInt32 = 0x1A45_DFA3
    static let ebmlVersion: UInt32 = 0x4286
    static let ebmlReadVersion: UInt32 = 0x42F7
    static let ebmlMaxIDLength: UInt32 = 0x42F2
    static let ebmlMaxSizeLength: UInt32 = 0x42F3
    static let docType: UInt32 = 0x4282
    static let docTypeVersion: UInt32 = 0x4287
    static let docTypeReadVersion: UInt32 = 0x4285
    static let void: UInt32 = 0xEC

    static let segment: UInt32 = 0x1853_8067
    static let seekHead: UInt32 = 0x114D_9B74
    static let seek: UInt32 = 0x4DBB
    static let seekID: UInt32 = 0x53AB
    static let seekPosition: UInt32 = 0x53AC

    static let info: UInt32 = 0x1549_A966
    static let timestampScale: UInt32 = 0x2A_D7B1
    static let duration: UInt32 = 0x4489
    static let dateUTC: UInt32 = 0x4461
    static let muxingApp: UInt32 = 0x4D80
    static let writingApp: UInt32 = 0x5741

    static let tracks: UInt32 = 0x1654_AE6B
    static let trackEntry: UInt32 = 0xAE
    static let trackNumber: UInt32 = 0xD7
    static let trackUID: UInt32 = 0x73C5
    static let trackType: UInt32 = 0x83
    static let flagLacing: UInt32 = 0x9C
    static let defaultDuration: UInt32 = 0x23_E383
    static let codecID: UInt32 = 0x86
    static let codecPrivate: UInt32 = 0x63A2
    static let video: UInt32 = 0xE0
    static let pixelWidth: UInt32 = 0xB0
    static let audio: UInt32 = 0xE1
    static let samplingFrequency: UInt32 = 0xB5
    static let channels: UInt32 = 0x9F
    static let bitDepth: UInt32 = 0x6264
    static let codecDelay: UInt32 = 0x56AA
    static let seekPreRoll: UInt32 = 0x56BB
    static let pixelHeight: UInt32 = 0xBA
    static let displayWidth: UInt32 = 0x54B0
    static let displayHeight: UInt32 = 0x54BA

    static let cluster: UInt32 = 0x1F43_B675
    static let clusterTimestamp: UInt32 = 0xE7
    static let simpleBlock: UInt32 = 0xA3

    static let cues: UInt32 = 0x1C53_BB6B
    static let cuePoint: UInt32 = 0xBB
    static let cueTime: UInt32 = 0xB3
    static let cueTrackPositions: UInt32 = 0xB7
    static let cueTrack: UInt32 = 0xF7
    static let cueClusterPosition: UInt32 = 0xF1
    static let cueRelativePosition: UInt32 = 0xF0

    static let tags: UInt32 = 0x1254_C367
    static let tag: UInt32 = 0x7373
    static let targets: UInt32 = 0x63C0
    static let simpleTag: UInt32 = 0x67C8
    static let tagName: UInt32 = 0x45A3
    static let tagString: UInt32 = 0x4487
}
