# Envmgr PowerShell module: envmgr environments inside the current session.
#   Import-Module Envmgr     (envmgr init powershell prints the line for your profile)
#   Enter-Envmgr --cuda 12.4 --vs community     apply (replaces an active envmgr environment)
#   Exit-Envmgr                                  restore exactly the previous values
# A second Enter-Envmgr with the same arguments starts no Python while nothing envmgr's answer depends
# on has changed (a slot envmgr writes, checked and applied by PowerShell itself: see below).

function Enter-Envmgr {
    [CmdletBinding()]
    param([Parameter(ValueFromRemainingArguments = $true)][string[]] $Arguments)
    $list = [string[]]@(if ($null -ne $Arguments) { $Arguments })   # always an array, maybe empty
    # Re-activation without Python: a slot envmgr wrote for these arguments, checked here (no process).
    $slot = Get-EnvmgrSlotPath $list
    if ($slot -and (Use-EnvmgrSlot $slot $list) -eq 'applied') { return }
    $saved = $env:ENVMGR_SLOT
    [Environment]::SetEnvironmentVariable('ENVMGR_SLOT', $slot)    # envmgr writes the slot there
    try {
        $script, $code = Get-EnvmgrScript (@('export', '--activate', '--format', 'ps1') + $list)
    } finally {
        [Environment]::SetEnvironmentVariable('ENVMGR_SLOT', $saved)
    }
    if ($code -ne 0) { throw "envmgr export failed (exit code $code)" }
    Invoke-Expression $script
}

function Exit-Envmgr {
    [CmdletBinding()]
    param()
    $script, $code = Get-EnvmgrScript @('deactivate', '--format', 'ps1')
    if ($code -ne 0) { throw "envmgr deactivate failed (exit code $code)" }
    if ($script.Trim()) { Invoke-Expression $script }
}

# envmgr writes UTF-8 into a pipe; PowerShell decodes a program's output with [Console]::OutputEncoding
# (the console's OEM code page unless changed), which turned a non-ASCII value (C:\Users\Jörg\... in the
# PATH that Exit-Envmgr restores) into other characters. UTF-8 while envmgr runs, then as it was.
function Get-EnvmgrScript([string[]] $EnvmgrArgs) {
    $before = [Console]::OutputEncoding
    try { [Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false } catch { }
    try {
        $text = (& envmgr @EnvmgrArgs | Out-String)
        return $text, $LASTEXITCODE
    } finally {
        try { [Console]::OutputEncoding = $before } catch { }
    }
}

# ---- Re-activation without Python (issue 14 item 3) ---------------------------------------------
# envmgr/fastpath/slot_ps1.py writes the slot: a .psd1 hashtable read as data (Import-PowerShellDataFile
# runs nothing). It holds what envmgr's answer depends on as envmgr read it: the arguments, the cache
# key's variables, the CUDA_PATH_V* set, and the LastWriteTimeUtc ticks, kind and length (or absence)
# of every watched path. Use-EnvmgrSlot compares each with this session and this disk, then computes
# every final value as activation_delta does (EnvDelta.apply) before it sets any; any difference or
# doubt answers 'stale' with nothing changed, and Enter-Envmgr runs envmgr, which writes the slot again.

function Get-EnvmgrSlotPath([string[]] $List) {
    $dir = $env:ENVMGR_CACHE_DIR
    if (-not $dir) {
        if ([Environment]::OSVersion.Platform -eq [PlatformID]::Win32NT) {
            $dir = [IO.Path]::Combine([Environment]::GetFolderPath('LocalApplicationData'), 'envmgr', 'Cache')
        } else {
            $base = $env:XDG_CACHE_HOME
            if (-not "$base".Trim()) { $base = [IO.Path]::Combine($HOME, '.cache') }
            $dir = [IO.Path]::Combine($base, 'envmgr')
        }
    }
    $name = (@($List) -join [char]0x1f) -creplace '[^A-Za-z0-9._=-]', '_'    # as shells/envmgr.sh
    if ($name.Length -gt 120 -or -not [IO.Path]::IsPathRooted($dir)) { return $null }
    return [IO.Path]::Combine($dir, 'reactivate', "ps1-$name.psd1")
}

function Test-EnvmgrStamp([string] $Path, [string] $Kind, [long] $Ticks, [long] $Length) {
    # As cachekey.stat_token read by .NET: a file or folder with these ticks (and a file's length), or
    # nothing there. A link or junction (.NET reports the link itself, os.stat its target) is a doubt.
    try {
        $file = [IO.FileInfo]::new($Path)
        $item = if ($file.Exists) { $file } else { [IO.DirectoryInfo]::new($Path) }
        if (-not $item.Exists) { return $Kind -ceq 'A' }
        if ($item.Attributes.HasFlag([IO.FileAttributes]::ReparsePoint)) { return $false }
        if ($item.LastWriteTimeUtc.Ticks -ne $Ticks) { return $false }
        if ($Kind -ceq 'F') { return $file.Exists -and $file.Length -eq $Length }
        return $Kind -ceq 'D' -and -not $file.Exists
    } catch {
        return $false
    }
}

function Get-EnvmgrKey([string] $Entry, [bool] $Fold) {
    # winenv.path_key: a trailing run of '\' and '/' dropped unless nothing is left; case folded on
    # Windows (the entries are printable ASCII here, where .NET's and Python's lower case agree).
    $key = $Entry.TrimEnd([char[]]('\', '/'))
    if ($key.Length -eq 0) { $key = $Entry }
    if ($Fold) { $key = $key.ToLowerInvariant() }
    return $key
}

function Join-EnvmgrList($Current, [string[]] $Entries, [bool] $Prepend, [bool] $Fold) {
    # EnvDelta.apply of one prepend/append: the current entries (blank ones dropped: ' ' only, as the
    # values are printable ASCII) not among those added, the added ones before or after, duplicates
    # (by Get-EnvmgrKey) dropped after their first spelling.
    $sep = if ($Fold) { ';' } else { ':' }
    $added = [Collections.Generic.HashSet[string]]::new([StringComparer]::Ordinal)
    foreach ($e in $Entries) { $null = $added.Add((Get-EnvmgrKey $e $Fold)) }
    $rest = [Collections.Generic.List[string]]::new()
    if ($null -ne $Current) {
        foreach ($e in $Current.Split([char]$sep)) {
            if ($e -cmatch '^ *$') { continue }
            if (-not $added.Contains((Get-EnvmgrKey $e $Fold))) { $rest.Add($e) }
        }
    }
    $merged = @(if ($Prepend) { $Entries; $rest } else { $rest; $Entries })
    $seen = [Collections.Generic.HashSet[string]]::new([StringComparer]::Ordinal)
    $out = [Collections.Generic.List[string]]::new()
    foreach ($e in $merged) { if ($seen.Add((Get-EnvmgrKey $e $Fold))) { $out.Add($e) } }
    return ($out -join $sep)
}

function Use-EnvmgrSlot([string] $Slot, [string[]] $List) {
    # 'applied' when the slot held and this session now has envmgr's answer; 'stale' (nothing changed).
    if (-not [IO.File]::Exists($Slot)) { return 'stale' }
    try { $d = Import-PowerShellDataFile -LiteralPath $Slot -ErrorAction Stop } catch { return 'stale' }
    $windows = [Environment]::OSVersion.Platform -eq [PlatformID]::Win32NT
    if ($d.Format -ne 1 -or $d.Windows -ne $windows) { return 'stale' }
    $want = @($d.Args)
    if ($List.Count -ne $want.Count) { return 'stale' }
    for ($i = 0; $i -lt $want.Count; $i++) { if ($List[$i] -cne $want[$i]) { return 'stale' } }
    $envs = @($d.Env)        # NAME, VALUE: as envmgr reads it ('' when unset)
    for ($i = 0; $i -lt $envs.Count; $i += 2) {
        if ("$([Environment]::GetEnvironmentVariable($envs[$i]))" -cne $envs[$i + 1]) { return 'stale' }
    }
    $versioned = @($d.Versioned)    # NAME, VALUE: every CUDA_PATH_V* (upper case on Windows, as os.environ)
    $count = 0
    foreach ($pair in [Environment]::GetEnvironmentVariables().GetEnumerator()) {
        $name = [string]$pair.Key
        $head = $name.Substring(0, [Math]::Min(11, $name.Length))
        if ($head -cmatch '[^\x20-\x7e]') { return 'stale' }    # Python's upper() beyond ASCII: unproven
        if ($head.ToUpperInvariant() -cne 'CUDA_PATH_V') { continue }
        if ($name -cmatch '[^\x20-\x7e]') { return 'stale' }
        if ($windows) { $name = $name.ToUpperInvariant() }
        $found = $false
        for ($i = 0; $i -lt $versioned.Count; $i += 2) {
            if ($versioned[$i] -ceq $name) { $found = [string]$pair.Value -ceq $versioned[$i + 1]; break }
        }
        if (-not $found) { return 'stale' }
        $count += 2
    }
    if ($count -ne $versioned.Count) { return 'stale' }
    $paths = @($d.Paths)     # PATH, KIND (F file, D folder, A absent), TICKS, LENGTH
    for ($i = 0; $i -lt $paths.Count; $i += 4) {
        if (-not (Test-EnvmgrStamp $paths[$i] $paths[$i + 1] $paths[$i + 2] $paths[$i + 3])) { return 'stale' }
    }
    # activation_delta: every final value first (nothing is set before all are known).
    $ops = @($d.Ops)         # NAME, OP, COUNT, ENTRY...
    $names = [Collections.Generic.List[string]]::new()
    $final = @{}
    $restore = [Collections.Generic.List[string]]::new()
    $i = 0
    while ($i -lt $ops.Count) {
        $name = [string]$ops[$i]
        $op = [string]$ops[$i + 1]
        $n = [int]$ops[$i + 2]
        $values = [string[]]@(if ($n -gt 0) { $ops[($i + 3)..($i + 2 + $n)] })
        $i += 3 + $n
        if (-not $final.ContainsKey($name)) {
            $now = [Environment]::GetEnvironmentVariable($name)
            if ($null -eq $now) {
                $restore.Add('"' + $name + '": null')
            } else {
                if ($now -cmatch '[^\x20-\x7e]') { return 'stale' }
                $restore.Add('"' + $name + '": "' + $now.Replace('\', '\\').Replace('"', '\"') + '"')
            }
            $names.Add($name)
            $final[$name] = $now
        }
        if ($op -ceq 'set') { $final[$name] = $values[0] }
        elseif ($op -ceq 'unset') { $final[$name] = $null }
        elseif ($op -ceq 'prepend' -or $op -ceq 'append') {
            $final[$name] = Join-EnvmgrList $final[$name] $values ($op -ceq 'prepend') $windows
        } else { return 'stale' }
    }
    foreach ($name in $names) {
        $value = $final[$name]
        if ($null -ne $value -and ($value.Length -eq 0 -or $value.Length -gt 32766)) { return 'stale' }
    }
    foreach ($name in $names) { [Environment]::SetEnvironmentVariable($name, $final[$name]) }
    [Environment]::SetEnvironmentVariable('ENVMGR_ACTIVE', [string]$d.Marker)
    [Environment]::SetEnvironmentVariable('ENVMGR_RESTORE', '{' + ($restore -join ', ') + '}')
    return 'applied'
}

# Tab completion for envmgr's commands and options, answered by envmgr itself (click).
Register-ArgumentCompleter -Native -CommandName @('envmgr', 'envmgr.exe') -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
    if ($wordToComplete -and $words.Count -gt 0) { $words = @($words | Select-Object -SkipLast 1) }
    & envmgr complete-words --incomplete "$wordToComplete" -- @words | ForEach-Object {
        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
    }
}

Export-ModuleMember -Function @('Enter-Envmgr', 'Exit-Envmgr')
