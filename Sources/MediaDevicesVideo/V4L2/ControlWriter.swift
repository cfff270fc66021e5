import MediaDevicesCore
import CV4L2
import Glibc

/// Setting controls on an open node, all-or-nothing: every setting is resolved and checked
/// against the control's description first (`ControlResolver`), then the whole set goes to the
/// driver as one `VIDIOC_TRY_EXT_CTRLS` and, if the driver takes it, one `VIDIOC_S_EXT_CTRLS`.
struct ControlWriter {
    let device: V4L2Device
    let controls: [CameraControl]

    /// Resolves and checks every setting against `controls`; throws for the first that cannot
    /// be applied.
    func resolve(_ settings: [ControlSetting]) throws(MediaDevicesError) -> [ControlResolver.Resolved] {
        try ControlResolver(device: device.path, controls: controls).resolve(settings)
    }

    /// Applies `settings` as one request, or none of them.
    func apply(_ settings: [ControlSetting]) throws(MediaDevicesError) {
        let resolved = try resolve(settings)
        guard !resolved.isEmpty else { return }
        try send(resolved, request: cv4l2_VIDIOC_TRY_EXT_CTRLS, name: "VIDIOC_TRY_EXT_CTRLS")
        try send(resolved, request: cv4l2_VIDIOC_S_EXT_CTRLS, name: "VIDIOC_S_EXT_CTRLS")
    }

    /// One TRY or SET request for every resolved setting.
    private func send(_ resolved: [ControlResolver.Resolved], request: UInt, name: String) throws(MediaDevicesError) {
        var ids = resolved.map(\.control.id)
        var values = resolved.map { $0.value.integer ?? 1 }
        var payloads = resolved.map { $0.control.flags.contains(.hasPayload) ? $0.value.payload(elementSize: $0.control.valueElementSize) : nil }
        var sizes = payloads.map { UInt32($0?.count ?? 0) }
        var errorIndex: UInt32 = 0
        let status = withPayloadPointers(&payloads) { pointers in
            cv4l2_ext_controls(device.file.rawValue, request, cv4l2_CTRL_WHICH_CUR_VAL, UInt32(resolved.count), &ids, &values,
                               pointers, &sizes, &errorIndex)
        }
        guard status != 0 else { return }
        let error = errno
        let culprit = Int(errorIndex) < resolved.count ? resolved[Int(errorIndex)] : nil
        if let culprit, error == ERANGE || error == EINVAL {
            throw MediaDevicesError(.invalidValue, device: device.path, operation: name, errno: error,
                                    detail: "\(culprit.control.key) (\(culprit.control.name)) does not take \(culprit.value); it takes \(ControlResolver.takes(culprit.control)). Nothing was changed")
        }
        if error == EACCES, let culprit {
            throw MediaDevicesError(.invalidState, device: device.path, operation: name, errno: error,
                                    detail: "\(culprit.control.key) (\(culprit.control.name)) cannot be set now (read-only or inactive)")
        }
        throw MediaDevicesError.fromErrno(error, device: device.path, operation: name)
    }

    /// Runs `body` with a C array of pointers to the payloads (NULL for integer controls).
    private func withPayloadPointers<R>(_ payloads: inout [[UInt8]?], _ body: (UnsafePointer<UnsafeMutableRawPointer?>) -> R) -> R {
        var storage = payloads.map { bytes -> UnsafeMutableRawPointer? in
            guard let bytes else { return nil }
            let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
            pointer.copyMemory(from: bytes, byteCount: bytes.count)
            return pointer
        }
        defer { storage.forEach { $0?.deallocate() } }
        return storage.withUnsafeMutableBufferPointer { body(UnsafePointer($0.baseAddress!)) }
    }
}
