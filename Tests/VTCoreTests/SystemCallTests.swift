import Foundation
import Testing
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The funnel every system call goes through: EINTR made again, other errors typed with the
/// call and errno, EBADF/EFAULT stopping the process, and the seam tests force errors with.
@Suite struct SystemCallTests {
    @Test func aCallInterruptedBySignalsIsMadeAgain() throws {
        let (readEnd, writeEnd) = try makePipe()
        defer { try? closeDescriptor(readEnd); try? closeDescriptor(writeEnd) }
        try writeFully(writeEnd, Array("abc".utf8))
        let faults = SystemCallFaults([.init(call: "read", errno: EINTR, times: 2)])
        var bytes = [UInt8](repeating: 0, count: 8)
        let count = try faults.during { () throws(SystemError) -> Int in
            try systemCall("read") { bytes.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) } }
        }
        #expect(count == 3)
        #expect(Array(bytes.prefix(3)) == Array("abc".utf8))
        #expect(faults.attempts(of: "read") == 3)
    }

    @Test func anyOtherFailureNamesTheCallAndErrno() throws {
        let (readEnd, writeEnd) = try makePipe()
        defer { try? closeDescriptor(readEnd); try? closeDescriptor(writeEnd) }
        let faults = SystemCallFaults([.init(call: "write", errno: ENOSPC, after: 1, times: 1)])
        faults.during {
            #expect(throws: Never.self) { try writeFully(writeEnd, [1]) }
            #expect(throws: SystemError(call: "write", errno: ENOSPC)) { try writeFully(writeEnd, [2]) }
            #expect(throws: Never.self) { try writeFully(writeEnd, [3]) }
        }
        #expect(faults.attempts(of: "write") == 3)
        // The failed write never reached the pipe.
        var bytes = [UInt8](repeating: 0, count: 8)
        let count = try systemCall("read") { bytes.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) } }
        #expect(Array(bytes.prefix(count)) == [1, 3])
        #expect(SystemError(call: "write", errno: ENOSPC).description == "write: No space left on device")
    }

    @Test func aRealFailureComesBackTyped() {
        #expect(throws: SystemError(call: "open", errno: ENOENT)) {
            try systemCall("open") { open("/nonexistent/vtrecord-test", O_RDONLY | O_CLOEXEC) }
        }
    }

    @Test func faultsStayOnTheThreadThatArmedThem() async throws {
        let faults = SystemCallFaults([.init(call: "open", errno: EMFILE)])
        let elsewhere = try faults.during { () throws -> Bool in
            #expect(throws: SystemError(call: "open", errno: EMFILE)) {
                try systemCall("open") { open("/dev/null", O_RDONLY | O_CLOEXEC) }
            }
            // Another thread, while this one has faults armed, opens as usual.
            let opened = DispatchSemaphore(value: 0)
            let result = LockedFlag()
            Thread {
                if let fd = try? systemCall("open", { open("/dev/null", O_RDONLY | O_CLOEXEC) }) {
                    try? closeDescriptor(fd)
                    result.set()
                }
                opened.signal()
            }.start()
            opened.wait()
            return result.value
        }
        #expect(elsewhere)
        #expect(faults.attempts(of: "open") == 1)
    }

    @Test func aFailedMappingIsReportedAsMmap() {
        let faults = SystemCallFaults([.init(call: "mmap", errno: ENOMEM)])
        _ = faults.during {
            #expect(throws: SystemError(call: "mmap", errno: ENOMEM)) {
                try systemCall("mmap") { mmap(nil, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) }
            }
        }
        // Unarmed, MAP_FAILED is the failure, not a pointer.
        #expect(throws: SystemError(call: "mmap", errno: EINVAL)) {
            try systemCall("mmap") { mmap(nil, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) }
        }
    }

    /// close is not made again after EINTR: the descriptor is gone already.
    @Test func closeInterruptedCountsAsClosed() throws {
        let (readEnd, writeEnd) = try makePipe()
        defer { try? closeDescriptor(readEnd) }
        let faults = SystemCallFaults([.init(call: "close", errno: EINTR)])
        try faults.during { () throws(SystemError) in try closeDescriptor(writeEnd) }
        #expect(faults.attempts(of: "close") == 1)
        #expect(fcntl(writeEnd, F_GETFD) == -1 && errno == EBADF)
    }

    @Test func aClosedStandardDescriptorIsAnErrorNotABug() {
        // -1 stands for a standard output the caller closed before starting us.
        #expect(throws: SystemError(call: "write", errno: EBADF)) {
            try writeFully(-1, [1], descriptor: .inherited)
        }
    }

    /// The errors that mean the call was made wrongly are the ones the funnel stops the
    /// process for (a precondition, which a test cannot survive, so the verdict is tested).
    @Test func badDescriptorsAndAddressesAreBugsOtherErrorsAreNot() {
        #expect(SystemError.programmingError(EBADF, descriptor: .own) != nil)
        #expect(SystemError.programmingError(EFAULT, descriptor: .own) != nil)
        #expect(SystemError.programmingError(EFAULT, descriptor: .inherited) != nil)
        #expect(SystemError.programmingError(EBADF, descriptor: .inherited) == nil)
        for code in [ENOSPC, EIO, ENODEV, EAGAIN, EPIPE, EFBIG, EINVAL, ENOMEM] {
            #expect(SystemError.programmingError(code, descriptor: .own) == nil)
        }
    }
}

private func makePipe() throws(SystemError) -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    try systemCall("pipe") { pipe(&fds) }
    return (fds[0], fds[1])
}

private final class LockedFlag: @unchecked Sendable {
    // @unchecked Sendable: set on one thread before a semaphore signal, read after the wait.
    private(set) var value = false
    func set() { value = true }
}
