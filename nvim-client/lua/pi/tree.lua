-- Session tree: normalising pi/getTree results (nested or flat) and rendering them as text lines.
local M = {}

local PREVIEW = 120

local function one_line(text)
  text = tostring(text or ""):gsub("[\r\n\t]+", " ")
  if #text > PREVIEW then
    text = text:sub(1, PREVIEW) .. "…"
  end
  return text
end

--- Text of a message/custom_message `content` (string or blocks).
function M.content_text(content)
  if type(content) == "string" then
    return content
  end
  if type(content) ~= "table" then
    return ""
  end
  local parts = {}
  for _, block in ipairs(content) do
    if type(block) == "table" then
      if block.type == "text" and block.text then
        table.insert(parts, block.text)
      elseif block.type == "toolCall" then
        table.insert(parts, "[" .. tostring(block.name) .. "]")
      elseif block.type == "image" then
        table.insert(parts, "[image]")
      end
    end
  end
  return table.concat(parts, " ")
end

--- A TreeNode-like record for a raw entry (used when building the tree from pi/getEntries).
local function node_from_entry(entry)
  local node = {
    id = entry.id,
    parentId = entry.parentId,
    type = entry.type,
    timestamp = entry.timestamp,
    children = {},
  }
  local kind = entry.type
  local preview
  if kind == "message" and type(entry.message) == "table" then
    local msg = entry.message
    node.role = msg.role
    if msg.role == "bashExecution" then
      preview = "$ " .. tostring(msg.command or "")
    else
      preview = M.content_text(msg.content)
    end
  elseif kind == "custom_message" then
    preview = M.content_text(entry.content)
  elseif kind == "compaction" or kind == "branch_summary" then
    preview = entry.summary
  elseif kind == "session_info" then
    preview = entry.name
  elseif kind == "model_change" then
    preview = tostring(entry.provider) .. "/" .. tostring(entry.modelId)
  elseif kind == "thinking_level_change" then
    preview = entry.thinkingLevel
  elseif kind == "label" then
    preview = entry.label
  elseif kind == "custom" then
    preview = entry.customType
  end
  if preview and preview ~= "" then
    node.preview = one_line(preview)
  end
  return node
end

--- Build {leafId, roots} from entries in file order (labels resolved as pi does: last one wins).
function M.from_entries(entries, leaf_id)
  local by_id, order, labels = {}, {}, {}
  for _, entry in ipairs(entries) do
    if entry.type ~= "session" and entry.id then
      local node = node_from_entry(entry)
      by_id[node.id] = node
      table.insert(order, node)
      if entry.type == "label" and entry.targetId then
        labels[entry.targetId] = entry.label -- nil clears
      end
    end
  end
  local roots = {}
  for _, node in ipairs(order) do
    node.label = labels[node.id]
    local parent = node.parentId and by_id[node.parentId]
    if parent then
      table.insert(parent.children, node)
    else
      table.insert(roots, node)
    end
  end
  return { leafId = leaf_id, roots = roots }
end

--- Normalise a pi/getTree result: nested `roots`, or the flat form offered for deep trees
--- (`{format = "flat", rootIds, nodes}`, each node with `childIds` instead of `children`).
--- Returns {leafId, roots} with children lists.
function M.normalise(result)
  result = result or {}
  if result.roots then
    return { leafId = result.leafId, roots = result.roots }
  end
  local flat = result.nodes or {}
  local by_id, roots = {}, {}
  for _, n in ipairs(flat) do
    n.children = {}
    by_id[n.id] = n
  end
  if result.rootIds then
    for _, n in ipairs(flat) do
      for _, child in ipairs(n.childIds or {}) do
        if by_id[child] then
          table.insert(n.children, by_id[child])
        end
      end
    end
    for _, id in ipairs(result.rootIds) do
      if by_id[id] then
        table.insert(roots, by_id[id])
      end
    end
  else
    for _, n in ipairs(flat) do
      local parent = n.parentId and by_id[n.parentId]
      if parent then
        table.insert(parent.children, n)
      else
        table.insert(roots, n)
      end
    end
  end
  return { leafId = result.leafId, roots = roots }
end

local function describe(node)
  local head
  if node.type == "message" then
    head = node.role or "message"
  else
    head = node.type or "?"
  end
  local text = head
  if node.preview and node.preview ~= "" then
    text = text .. ": " .. one_line(node.preview)
  end
  if node.label then
    text = text .. "  [" .. one_line(node.label) .. "]"
  end
  return text
end

--- Every node of `roots` (iteratively: trees can be thousands deep).
local function walk_all(roots)
  local out, todo = {}, {}
  for _, r in ipairs(roots) do
    table.insert(todo, r)
  end
  while #todo > 0 do
    local n = table.remove(todo)
    table.insert(out, n)
    for _, c in ipairs(n.children or {}) do
      table.insert(todo, c)
    end
  end
  return out
end

--- pi's tree filters, in the order its tree view cycles through them.
M.filters = { "default", "no-tools", "user-only", "labeled-only", "all" }

-- Bookkeeping entries pi's default view leaves out.
local settings_types = {
  label = true,
  custom = true,
  model_change = true,
  thinking_level_change = true,
  session_info = true,
}

--- Whether `node` is shown under `filter` (pi's tree-view filter modes). As in pi, an assistant
--- message without text (the server marks it `noText`: only tool calls or thinking) is left out
--- under every filter unless it is the leaf (`leaf_id`).
function M.passes(node, filter, leaf_id)
  if node.noText and node.id ~= leaf_id then
    return false
  end
  local settings = settings_types[node.type] == true
  if filter == "all" then
    return true
  elseif filter == "user-only" then
    return node.type == "message" and node.role == "user"
  elseif filter == "labeled-only" then
    return node.label ~= nil
  elseif filter == "no-tools" then
    return not settings and not (node.type == "message" and node.role == "toolResult")
  end
  return not settings
end

--- Render a tree to lines. Linear stretches stay at one indentation level; branches get
--- ├─ / └─ connectors (as pi's tree view). Gutter: ">" the leaf, "*" on the leaf's path. Entries
--- that `opts.filter` (one of M.filters, default "default") hides leave their rows out, as in pi;
--- a hidden leaf is shown on its nearest shown ancestor.
--- Returns lines, ids (ids[i] = entry id of lines[i]).
function M.render(tree, opts)
  local filter = (opts and opts.filter) or "default"
  tree = M.normalise(tree)
  local leaf = tree.leafId
  local stack = {}
  local roots = tree.roots or {}
  local on_path, nodes, parent_of = {}, {}, {}
  for _, n in ipairs(walk_all(roots)) do
    nodes[n.id] = n
    for _, c in ipairs(n.children or {}) do
      parent_of[c.id] = n.id
    end
  end
  local cur = leaf
  while cur do
    on_path[cur] = true
    cur = parent_of[cur]
  end
  -- the leaf as drawn: the leaf, or its nearest ancestor the filter shows
  local shown_leaf = leaf
  while shown_leaf and nodes[shown_leaf] and not M.passes(nodes[shown_leaf], filter, leaf) do
    shown_leaf = parent_of[shown_leaf]
  end

  local function push_children(children, body)
    local count = #children
    if count == 1 then
      table.insert(stack, { node = children[1], head = body, body = body })
      return
    end
    for i = count, 1, -1 do
      local last = i == count
      table.insert(stack, {
        node = children[i],
        head = body .. (last and "└─ " or "├─ "),
        body = body .. (last and "   " or "│  "),
      })
    end
  end

  push_children(roots, "")
  local lines, ids = {}, {}
  while #stack > 0 do
    local item = table.remove(stack)
    local node = item.node
    if M.passes(node, filter, leaf) then
      local gutter = (node.id == shown_leaf and "> ") or (on_path[node.id] and "* ") or "  "
      local line = gutter .. item.head .. describe(node)
      if node.id == leaf then
        line = line .. "  ← leaf"
      elseif node.id == shown_leaf then
        line = line .. "  ← leaf (below, hidden)"
      end
      table.insert(lines, line)
      table.insert(ids, node.id)
    end
    push_children(node.children or {}, item.body)
  end
  if #lines == 0 then
    lines = { next(nodes) and ("(nothing shown by the " .. filter .. " filter)") or "(empty session)" }
    ids = { false }
  end
  return lines, ids
end

return M
