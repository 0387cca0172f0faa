/// One scaling_list() of an SPS or PPS (clause 7.3.2.1.1.1), kept as the delta_scale values
/// it was coded with.
///
/// Keeping the coded deltas rather than the resulting matrix means a parsed parameter set
/// writes back bit for bit: an encoder may end a list early (a next scale of 0 repeats the
/// last value to the end) and the matrix alone does not say where it did.
public struct ScalingList: Sendable, Equatable {
    /// delta_scale values in coding order. A first delta of −8 selects the default matrix
    /// (useDefaultScalingMatrixFlag).
    public var deltaScales: [Int]

    public init(deltaScales: [Int]) {
        self.deltaScales = deltaScales
    }

    /// True when the list selects the default matrix of Table 7-3 or 7-4.
    public var usesDefaultMatrix: Bool { deltaScales.first.map { (8 + $0 + 256) % 256 == 0 } ?? false }

    /// The scaling factors in zig-zag order, or nil when the list selects the default matrix.
    public func scales(count: Int) -> [Int]? {
        if usesDefaultMatrix { return nil }
        var scales: [Int] = []
        var last = 8
        var next = 8
        for index in 0..<count {
            if next != 0 {
                let delta = index < deltaScales.count ? deltaScales[index] : 0
                next = (last + delta + 256) % 256
            }
            last = next == 0 ? last : next
            scales.append(last)
        }
        return scales
    }

    /// Reads one scaling_list() of `size` entries (16 or 64).
    static func read(from reader: inout BitReader, size: Int) throws(BitstreamError) -> ScalingList {
        var deltas: [Int] = []
        var last = 8
        var next = 8
        for _ in 0..<size where next != 0 {
            let delta = try reader.se("delta_scale", in: -128...127)
            deltas.append(delta)
            next = (last + delta + 256) % 256
            last = next == 0 ? last : next
        }
        return ScalingList(deltaScales: deltas)
    }

    func write(to writer: inout BitBuilder) {
        for delta in deltaScales { writer.se(delta) }
    }

    /// The scaling_list_present flags and lists of an SPS or PPS scaling matrix: `count`
    /// lists, the first six 4x4 (16 entries), the rest 8x8 (64 entries). A nil entry is a
    /// list that is not present (the fall-back rule applies).
    static func readMatrix(from reader: inout BitReader, count: Int) throws(BitstreamError) -> [ScalingList?] {
        var lists: [ScalingList?] = []
        for index in 0..<count {
            if try reader.flag("scaling_list_present_flag[\(index)]") {
                lists.append(try read(from: &reader, size: index < 6 ? 16 : 64))
            } else {
                lists.append(nil)
            }
        }
        return lists
    }

    static func writeMatrix(_ lists: [ScalingList?], to writer: inout BitBuilder) {
        for list in lists {
            writer.flag(list != nil)
            list?.write(to: &writer)
        }
    }
}
