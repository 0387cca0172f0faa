import Foundation

/// Bytes for the other side of the HTTP server library's boundary, which frees them: a
/// malloc'ed copy, and its length in `count`.
public func handOver(_ bytes: [UInt8], _ count: UnsafeMutablePointer<Int>?) -> UnsafeMutablePointer<UInt8>? {
    guard let copy = malloc(max(1, bytes.count))?.assumingMemoryBound(to: UInt8.self) else { return nil }
    bytes.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress { copy.update(from: base, count: buffer.count) }
    }
    count?.pointee = bytes.count
    return copy
}

/// Bytes the other side handed over (malloc'ed, their length in the count `call` fills in),
/// copied and freed; nil when it gave none.
public func takeOver(_ call: (UnsafeMutablePointer<Int>) -> UnsafeMutablePointer<UInt8>?) -> [UInt8]? {
    var count = 0
    guard let bytes = call(&count) else { return nil }
    defer { free(bytes) }
    return Array(UnsafeBufferPointer(start: bytes, count: count))
}
