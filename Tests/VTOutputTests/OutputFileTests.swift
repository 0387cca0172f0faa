import Foundation
import Testing
import VTCore
import VTOutput

#if canImport(Glibc)
import Glibc
#endif

/// What an output file does when the system refuses a write or a close, reached through the
/// system-call seam instead of a full disk.
@Suite struct OutputFileTests {
    @Test(arguments: [(ENOSPC, "diskFull"), (EFBIG, "fileTooLarge"), (EIO, "writeFailed")])
    func aFailedWriteLeavesTheFileEndingAtItsLastWholeUnit(code: Int32, expected: String) throws {
        let path = AnnexBWriterTests.temporaryPath("fault-\(code).bin")
        defer { unlink(path) }
        let file = try OutputFile(path: path, overwrite: false)
        let faults = SystemCallFaults([.init(call: "write", errno: code, after: 2, times: 1)])
        let first = [UInt8](repeating: 1, count: 100)
        var thrown: OutputError?
        faults.during {
            for bytes in [first, first, [UInt8](repeating: 2, count: 50)] {
                bytes.withUnsafeBytes { buffer in
                    do throws(OutputError) { try file.append(buffer) } catch { thrown = error }
                }
            }
        }
        let error = try #require(thrown)
        switch (error, expected) {
        case (.diskFull(_, let cutBack, _), "diskFull"), (.fileTooLarge(_, let cutBack, _), "fileTooLarge"):
            #expect(cutBack)
        case (.writeFailed(_, let errno), "writeFailed"):
            #expect(errno == EIO)
        default:
            Issue.record("\(error) for errno \(code)")
        }
        #expect(file.bytesWritten == 200)
        try file.close()
        #expect(try AnnexBWriterTests.contents(path) == first + first)
    }

    /// A short write is continued, not reported: the unit lands whole.
    @Test func anInterruptedWriteIsMadeAgain() throws {
        let path = AnnexBWriterTests.temporaryPath("eintr.bin")
        defer { unlink(path) }
        let file = try OutputFile(path: path, overwrite: false)
        let faults = SystemCallFaults([.init(call: "write", errno: EINTR, times: 3)])
        faults.during {
            #expect(throws: Never.self) { try file.append([UInt8](repeating: 7, count: 10)) }
        }
        #expect(faults.attempts(of: "write") == 4)
        try file.close()
        #expect(try AnnexBWriterTests.contents(path) == [UInt8](repeating: 7, count: 10))
    }

    /// Some file systems (NFS) only report a lost write at close.
    @Test func anErrorAtCloseIsReported() throws {
        let path = AnnexBWriterTests.temporaryPath("close.bin")
        defer { unlink(path) }
        let file = try OutputFile(path: path, overwrite: false)
        try [UInt8](repeating: 7, count: 10).withUnsafeBytes { try file.append($0) }
        let faults = SystemCallFaults([.init(call: "close", errno: EIO)])
        #expect(throws: OutputError.writeFailed(path: path, errno: EIO)) {
            try faults.during { () throws(OutputError) in try file.close() }
        }
    }

    @Test func anOpenRefusedIsSaidWithItsReason() {
        let path = AnnexBWriterTests.temporaryPath("refused.bin")
        let faults = SystemCallFaults([.init(call: "open", errno: EROFS)])
        #expect(throws: OutputError.cannotOpen(path: path, errno: EROFS)) {
            try faults.during { () throws(OutputError) in _ = try OutputFile(path: path, overwrite: false) }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
