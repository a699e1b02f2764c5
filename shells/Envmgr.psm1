# Envmgr PowerShell module: envmgr environments inside the current session.
#   Import-Module Envmgr     (envmgr init powershell prints the line for your profile)
#   Enter-Envmgr --cuda 12.4 --vs community     apply (replaces an active envmgr environment)
#   Exit-Envmgr                                  restore exactly the previous values

function Enter-Envmgr {
    [CmdletBinding()]
    param([Parameter(ValueFromRemainingArguments = $true)][string[]] $Arguments)
    $script = (& envmgr export --activate --format ps1 @Arguments | Out-String)
    if ($LASTEXITCODE -ne 0) { throw "envmgr export failed (exit code $LASTEXITCODE)" }
    Invoke-Expression $script
}

function Exit-Envmgr {
    [CmdletBinding()]
    param()
    $script = (& envmgr deactivate --format ps1 | Out-String)
    if ($LASTEXITCODE -ne 0) { throw "envmgr deactivate failed (exit code $LASTEXITCODE)" }
    if ($script.Trim()) { Invoke-Expression $script }
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
