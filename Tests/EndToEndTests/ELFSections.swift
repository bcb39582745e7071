import Foundation

/// The section headers of an ELF64 little-endian file, by name: address and size. Nil for any
/// other file, or one whose tables point outside it.
struct ELFSections {
    private var sections: [String: (address: UInt64, size: UInt64)] = [:]

    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        // The magic, ELFCLASS64 and ELFDATA2LSB.
        guard bytes.count > 64, bytes[0..<6] == [0x7F, 0x45, 0x4C, 0x46, 2, 1] else { return nil }
        func integer(_ offset: Int, _ width: Int) -> Int? {
            guard offset >= 0, offset <= bytes.count - width else { return nil }
            return Int(exactly: bytes[offset ..< offset + width].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
        guard let table = integer(0x28, 8), let entry = integer(0x3A, 2), let count = integer(0x3C, 2), let names = integer(0x3E, 2),
              entry >= 64, count > names, table <= bytes.count, entry * count <= bytes.count - table,
              let namesOffset = integer(table + entry * names + 0x18, 8), namesOffset < bytes.count else { return nil }
        for index in 0..<count {
            let header = table + entry * index
            guard let name = integer(header, 4), name < bytes.count - namesOffset,
                  let address = integer(header + 0x10, 8), let size = integer(header + 0x20, 8) else { return nil }
            let start = namesOffset + name
            let end = bytes[start...].firstIndex(of: 0) ?? bytes.count
            sections[String(decoding: bytes[start..<end], as: UTF8.self)] = (UInt64(address), UInt64(size))
        }
    }

    subscript(name: String) -> (address: UInt64, size: UInt64)? { sections[name] }
}
